package protocol

import (
	"encoding/json"
	"fmt"
)

// RunStatus is the status of a run.
type RunStatus string

// The run statuses.
const (
	RunCreated   RunStatus = "created"
	RunPlanning  RunStatus = "planning"
	RunExecuting RunStatus = "executing"
	RunVerifying RunStatus = "verifying"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// RunStatusNames lists the values of RunStatus.
var RunStatusNames = []string{"created", "planning", "executing", "verifying", "completed", "failed", "cancelled"}

// Terminal reports whether s ends a run.
func (s RunStatus) Terminal() bool { return s == RunCompleted || s == RunFailed || s == RunCancelled }

// UnmarshalJSON accepts only the listed values.
func (s *RunStatus) UnmarshalJSON(b []byte) error {
	v, err := unmarshalClosed(b, "run status", RunStatusNames)
	*s = RunStatus(v)
	return err
}

// TaskStatus is the status of one task of a run.
type TaskStatus string

// TaskStatusNames lists the values of TaskStatus.
var TaskStatusNames = []string{"pending", "in_progress", "completed", "failed", "skipped", "cancelled"}

// UnmarshalJSON accepts only the listed values.
func (s *TaskStatus) UnmarshalJSON(b []byte) error {
	v, err := unmarshalClosed(b, "task status", TaskStatusNames)
	*s = TaskStatus(v)
	return err
}

// VerificationStatus is the status of a verification or of one check.
type VerificationStatus string

// VerificationStatusNames lists the values of VerificationStatus.
var VerificationStatusNames = []string{"pending", "running", "passed", "failed", "skipped", "needs_review"}

// UnmarshalJSON accepts only the listed values.
func (s *VerificationStatus) UnmarshalJSON(b []byte) error {
	v, err := unmarshalClosed(b, "verification status", VerificationStatusNames)
	*s = VerificationStatus(v)
	return err
}

// RunLifecyclePayload is the payload of a run_lifecycle event.
type RunLifecyclePayload struct {
	RunID         string          `json:"run_id"`
	SessionID     string          `json:"session_id"`
	Status        RunStatus       `json:"status"`
	Prompt        string          `json:"prompt,omitempty"`
	ResultSummary string          `json:"result_summary,omitempty"`
	Error         string          `json:"error,omitempty"`
	StartedAt     string          `json:"started_at,omitempty"`
	UpdatedAt     string          `json:"updated_at"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (p *RunLifecyclePayload) UnmarshalJSON(b []byte) error {
	type plain RunLifecyclePayload
	return strictDecode(b, "run_lifecycle", []string{"run_id", "session_id", "status", "updated_at"}, (*plain)(p))
}

// TaskListPayload is the payload of a task_list event: a full snapshot of
// a run's tasks.
type TaskListPayload struct {
	RunID     string          `json:"run_id"`
	SessionID string          `json:"session_id"`
	Tasks     []TaskItem      `json:"tasks"`
	UpdatedAt string          `json:"updated_at"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// UnmarshalJSON checks the required fields, naming the index of a bad task.
func (p *TaskListPayload) UnmarshalJSON(b []byte) error {
	type plain TaskListPayload
	var v struct {
		plain
		Tasks json.RawMessage `json:"tasks"`
	}
	if err := strictDecode(b, "task_list", []string{"run_id", "session_id", "tasks", "updated_at"}, &v); err != nil {
		return err
	}
	tasks, err := decodeList[TaskItem](v.Tasks, "task_list.tasks")
	if err != nil {
		return err
	}
	if tasks == nil {
		return fmt.Errorf("task_list.tasks: expected an array")
	}
	*p = TaskListPayload(v.plain)
	p.Tasks = tasks
	return nil
}

// MarshalJSON writes tasks as [] when empty.
func (p TaskListPayload) MarshalJSON() ([]byte, error) {
	type plain TaskListPayload
	p.Tasks = emptyIfNil(p.Tasks)
	return json.Marshal(plain(p))
}

// TaskItem is one task of a task list.
type TaskItem struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Status    TaskStatus      `json:"status"`
	DependsOn []string        `json:"depends_on,omitempty"`
	Evidence  []EvidenceRef   `json:"evidence,omitempty"`
	Artifacts []ArtifactRef   `json:"artifacts,omitempty"`
	Error     string          `json:"error,omitempty"`
	UpdatedAt string          `json:"updated_at,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (t *TaskItem) UnmarshalJSON(b []byte) error {
	type plain TaskItem
	return strictDecode(b, "task", []string{"id", "title", "status"}, (*plain)(t))
}

// VerificationPayload is the payload of a verification event.
type VerificationPayload struct {
	RunID         string              `json:"run_id"`
	SessionID     string              `json:"session_id"`
	Status        VerificationStatus  `json:"status"`
	Checks        []VerificationCheck `json:"checks,omitempty"`
	ResidualRisks []string            `json:"residual_risks,omitempty"`
	UpdatedAt     string              `json:"updated_at"`
	Metadata      json.RawMessage     `json:"metadata,omitempty"`
}

// UnmarshalJSON checks the required fields, naming the index of a bad check.
func (p *VerificationPayload) UnmarshalJSON(b []byte) error {
	type plain VerificationPayload
	var v struct {
		plain
		Checks json.RawMessage `json:"checks"`
	}
	if err := strictDecode(b, "verification", []string{"run_id", "session_id", "status", "updated_at"}, &v); err != nil {
		return err
	}
	checks, err := decodeList[VerificationCheck](v.Checks, "verification.checks")
	if err != nil {
		return err
	}
	*p = VerificationPayload(v.plain)
	p.Checks = checks
	return nil
}

// VerificationCheck is one check of a verification.
type VerificationCheck struct {
	ID        string             `json:"id"`
	Subject   string             `json:"subject"`
	Status    VerificationStatus `json:"status"`
	Command   string             `json:"command,omitempty"`
	Message   string             `json:"message,omitempty"`
	Evidence  []EvidenceRef      `json:"evidence,omitempty"`
	Artifacts []ArtifactRef      `json:"artifacts,omitempty"`
	Metadata  json.RawMessage    `json:"metadata,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (c *VerificationCheck) UnmarshalJSON(b []byte) error {
	type plain VerificationCheck
	return strictDecode(b, "check", []string{"id", "subject", "status"}, (*plain)(c))
}

// EvidenceRef points at evidence for a task or check.
type EvidenceRef struct {
	Kind     string          `json:"kind"`
	Summary  string          `json:"summary"`
	Artifact *ArtifactRef    `json:"artifact,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (e *EvidenceRef) UnmarshalJSON(b []byte) error {
	type plain EvidenceRef
	return strictDecode(b, "evidence", []string{"kind", "summary"}, (*plain)(e))
}

// ArtifactRef points at an artifact produced by a run.
type ArtifactRef struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind,omitempty"`
	URI       string  `json:"uri,omitempty"`
	Path      string  `json:"path,omitempty"`
	MimeType  string  `json:"mime_type,omitempty"`
	SHA256    string  `json:"sha256,omitempty"`
	SizeBytes *uint64 `json:"size_bytes,omitempty"`
	Summary   string  `json:"summary,omitempty"`
}

// UnmarshalJSON checks the required fields.
func (a *ArtifactRef) UnmarshalJSON(b []byte) error {
	type plain ArtifactRef
	return strictDecode(b, "artifact", []string{"id"}, (*plain)(a))
}

// ValidatePayload decodes and checks the payload of an event whose type has
// a typed payload the server must check (the eight typed blocking events and
// the three run contract events). It returns the decoded payload, or nil for types
// whose payload is free-form. The error names the missing or wrong field.
func ValidatePayload(t EventType, raw json.RawMessage) (any, error) {
	var v any
	switch t {
	case EventIdle:
		v = new(IdlePayload)
	case EventIntentDetection:
		v = new(IntentDetectionPayload)
	case EventContextPerception:
		v = new(ContextPerceptionPayload)
	case EventMemoryRecall:
		v = new(MemoryRecallPayload)
	case EventPlanning:
		v = new(PlanningPayload)
	case EventReasoning:
		v = new(ReasoningPayload)
	case EventRateLimit:
		v = new(RateLimitPayload)
	case EventConfirmation:
		v = new(ConfirmationPayload)
	case EventRunLifecycle:
		v = new(RunLifecyclePayload)
	case EventTaskList:
		v = new(TaskListPayload)
	case EventVerification:
		v = new(VerificationPayload)
	default:
		return nil, nil
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s: missing payload", t)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, err
	}
	return v, nil
}
