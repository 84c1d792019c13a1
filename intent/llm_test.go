package intent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLLM is an in-process OpenAI-compatible chat-completions endpoint.
type fakeLLM struct {
	mode     atomic.Value // "good", "slow", "garbage", "500", "refuse", "badintent"
	calls    atomic.Int32
	lastBody atomic.Value // string
	lastAuth atomic.Value // string
}

func newFakeLLM(t *testing.T, mode string) (*fakeLLM, *httptest.Server) {
	f := &fakeLLM{}
	f.mode.Store(mode)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		f.lastBody.Store(string(b))
		f.lastAuth.Store(r.Header.Get("Authorization"))
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		content := `{"intent":"locate","confidence":0.92,"target_hints":{"target_type":"symbol","target_name":"authenticate"}}`
		switch f.mode.Load().(string) {
		case "slow":
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
				return
			}
		case "garbage":
			content = "Sure! The intent is probably locate."
		case "badintent":
			content = `{"intent":"delete_everything","confidence":0.9}`
		case "500":
			http.Error(w, "model overloaded", http.StatusInternalServerError)
			return
		case "refuse":
			_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "refusal": "I can't help with that"}}}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func newTestLLM(t *testing.T, url string, timeout time.Duration) *LLM {
	l, err := NewLLM(LLMOptions{URL: url + "/v1", Model: "m", APIKey: "k-123", Timeout: timeout,
		Redact: func(s string) string { return strings.ReplaceAll(s, "AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws]") }})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A good answer decides, says so, and is cached for the same prompt.
func TestLLMGoodAnswerAndCache(t *testing.T) {
	f, srv := newFakeLLM(t, "good")
	l := newTestLLM(t, srv.URL, time.Second)
	prompt := "the thing that checks passwords, with key AKIAIOSFODNN7EXAMPLE, where does it live"
	r, err := l.DetectContext(context.Background(), prompt, "en")
	if err != nil || r.Classifier != ClassifierLLM || r.Intent != "locate" || r.Confidence != 0.92 ||
		r.Target != (Target{Name: "authenticate", Type: TargetSymbol}) {
		t.Fatalf("good: %+v, %v", r, err)
	}
	body := f.lastBody.Load().(string)
	if strings.Contains(body, "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(body, "[REDACTED:aws]") {
		t.Errorf("the prompt left the machine unredacted: %s", body)
	}
	if !strings.Contains(body, `"model":"m"`) || f.lastAuth.Load().(string) != "Bearer k-123" {
		t.Errorf("request: %s, auth %q", body, f.lastAuth.Load())
	}
	r2, err := l.DetectContext(context.Background(), prompt, "en")
	if err != nil || r2.Classifier != ClassifierCache || r2.Intent != "locate" || f.calls.Load() != 1 {
		t.Errorf("second ask: %+v, %v, %d calls", r2, err, f.calls.Load())
	}
}

// A slow endpoint never holds the caller longer than the timeout: the
// keyword tables decide.
func TestLLMTimeoutFallsBackWithinBudget(t *testing.T) {
	_, srv := newFakeLLM(t, "slow")
	const budget = 150 * time.Millisecond
	l := newTestLLM(t, srv.URL, budget)
	start := time.Now()
	r, err := l.DetectContext(context.Background(), "where is the config loader?", "")
	took := time.Since(start)
	if err == nil || r.Classifier != ClassifierKeyword || r.Intent != "locate" || r.Target.Name != "config loader" {
		t.Fatalf("slow: %+v, %v", r, err)
	}
	if took > budget+100*time.Millisecond {
		t.Errorf("held the caller %v; budget %v", took, budget)
	}
	t.Logf("slow endpoint: keyword answer after %v (timeout %v)", took.Round(time.Millisecond), budget)
}

// Garbage, a 500, a refusal and an intent outside the list all fall back
// to the keyword tables, and none of them is cached.
func TestLLMBadAnswersFallBack(t *testing.T) {
	for _, mode := range []string{"garbage", "500", "refuse", "badintent"} {
		t.Run(mode, func(t *testing.T) {
			f, srv := newFakeLLM(t, mode)
			l := newTestLLM(t, srv.URL, time.Second)
			for range 2 {
				r, err := l.DetectContext(context.Background(), "为什么部署任务失败了?", "")
				if err == nil || r.Classifier != ClassifierKeyword || r.Intent != "reason" || r.Target.Name != "部署任务" {
					t.Fatalf("%s: %+v, %v", mode, r, err)
				}
				if strings.Contains(err.Error(), "k-123") {
					t.Errorf("error names the API key: %v", err)
				}
			}
			if f.calls.Load() != 2 {
				t.Errorf("%d calls; a failed answer must not be cached", f.calls.Load())
			}
		})
	}
}

// Without an LLM the keyword tables decide and say so.
func TestNilLLMIsKeyword(t *testing.T) {
	var l *LLM
	r, err := l.DetectContext(context.Background(), "where is main.go", "")
	if err != nil || r.Classifier != ClassifierKeyword || r.Intent != "locate" {
		t.Fatalf("%+v, %v", r, err)
	}
}

func TestNewLLMChecksOptions(t *testing.T) {
	for _, o := range []LLMOptions{{URL: "ftp://x", Model: "m"}, {URL: "http://x"}, {URL: "", Model: "m"}} {
		if _, err := NewLLM(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	l, err := NewLLM(LLMOptions{URL: "http://h/v1/chat/completions/", Model: "m"})
	if err != nil || l.url != "http://h/v1/chat/completions" || l.Timeout() != DefaultLLMTimeout {
		t.Errorf("%v %+v", err, l)
	}
}

func TestAnswerCacheEvicts(t *testing.T) {
	c := newAnswerCache(2)
	k := func(b byte) [32]byte { return [32]byte{b} }
	c.put(k(1), Result{Intent: "a"})
	c.put(k(2), Result{Intent: "b"})
	c.get(k(1))
	c.put(k(3), Result{Intent: "c"})
	if _, ok := c.get(k(2)); ok {
		t.Error("least recently used entry kept")
	}
	if r, ok := c.get(k(1)); !ok || r.Intent != "a" {
		t.Error("recently used entry evicted")
	}
}
