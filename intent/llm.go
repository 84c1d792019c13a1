package intent

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The classifiers a Result can come from (Result.Classifier).
const (
	ClassifierKeyword = "keyword"   // the phrase tables of this package
	ClassifierLLM     = "llm"       // an LLM endpoint answered in time
	ClassifierCache   = "llm-cache" // an earlier LLM answer to the same prompt
)

// DefaultLLMTimeout is how long an LLM may take when LLMOptions.Timeout is 0.
const DefaultLLMTimeout = 800 * time.Millisecond

// Bounds on what an LLM endpoint may send back.
const (
	maxLLMResponseBytes = 64 << 10
	maxLLMTargetBytes   = 256
)

// LLMOptions configure an LLM classifier.
type LLMOptions struct {
	// URL is the endpoint's base URL ("http://127.0.0.1:11434/v1") or its
	// full chat-completions URL; "/chat/completions" is added when absent.
	URL string
	// Model is sent as the request's "model".
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer …". It is never
	// logged nor put in an error.
	APIKey string
	// Timeout bounds one classification, the request included
	// (DefaultLLMTimeout when 0). When it passes the keyword tables decide.
	Timeout time.Duration
	// Redact rewrites the prompt before it leaves the machine (the
	// harness passes its secrets redaction). Nil sends the prompt as is.
	Redact func(string) string
	// CacheSize is the number of answers kept for identical prompts (256
	// when 0, none when negative).
	CacheSize int
	// Client sends the requests (a client with no timeout of its own when
	// nil; the context carries the deadline).
	Client *http.Client
}

// LLM classifies prompts with an OpenAI-compatible chat-completions
// endpoint (Ollama, vLLM, llama.cpp's server, hosted APIs), asking for a
// JSON answer. It is safe for concurrent use.
type LLM struct {
	opts  LLMOptions
	url   string
	cache *answerCache
}

// NewLLM checks opts and returns a classifier.
func NewLLM(opts LLMOptions) (*LLM, error) {
	u := strings.TrimRight(strings.TrimSpace(opts.URL), "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("intent: llm url %q: want an http:// or https:// URL", opts.URL)
	}
	if opts.Model == "" {
		return nil, errors.New("intent: llm model is empty")
	}
	if !strings.HasSuffix(u, "/chat/completions") {
		u += "/chat/completions"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultLLMTimeout
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = 256
	}
	l := &LLM{opts: opts, url: u}
	if opts.CacheSize > 0 {
		l.cache = newAnswerCache(opts.CacheSize)
	}
	return l, nil
}

// Timeout is the most a classification waits for the endpoint.
func (l *LLM) Timeout() time.Duration { return l.opts.Timeout }

// DetectContext classifies prompt with the LLM when l is not nil, within
// its timeout; on a timeout, an error, a refusal or an answer that does not
// validate, the keyword tables decide (Detect). The Result says which
// classifier decided; err is why the LLM did not (nil when it did or when
// l is nil). It never waits longer than the timeout.
func (l *LLM) DetectContext(ctx context.Context, prompt, languageHint string) (r Result, err error) {
	if l == nil {
		r = Detect(prompt, languageHint)
		r.Classifier = ClassifierKeyword
		return r, nil
	}
	prompt = strings.ToValidUTF8(boundPrompt(prompt), "\uFFFD")
	key := sha256.Sum256([]byte(languageHint + "\x00" + prompt))
	if r, ok := l.cache.get(key); ok {
		r.Classifier = ClassifierCache
		return r, nil
	}
	r, err = l.ask(ctx, prompt, languageHint)
	if err != nil {
		r = Detect(prompt, languageHint)
		r.Classifier = ClassifierKeyword
		return r, err
	}
	l.cache.put(key, r)
	r.Classifier = ClassifierLLM
	return r, nil
}

// llmSystemPrompt tells the model what to answer.
const llmSystemPrompt = `You classify a user's request to a coding agent. Answer with one JSON object and nothing else:
{"intent": one of "recognize","understand","locate","retrieve","explore","reason","validate","compare","track","unknown",
 "confidence": a number from 0 to 1,
 "target_hints": {"target_type": one of "file","directory","package","symbol","url","workspace","concept" or "",
                  "target_name": the thing the request is about, as written, never the question words}}
The request may be in any language; answer in this format whatever its language.`

// ask sends one request and validates the answer.
func (l *LLM) ask(ctx context.Context, prompt, hint string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timeout)
	defer cancel()
	sent := prompt
	if l.opts.Redact != nil {
		sent = l.opts.Redact(prompt)
	}
	user := sent
	if hint != "" {
		user = "language_hint: " + hint + "\nrequest: " + sent
	}
	body, err := json.Marshal(map[string]any{
		"model":           l.opts.Model,
		"temperature":     0,
		"max_tokens":      200,
		"response_format": map[string]string{"type": "json_object"},
		"messages": []map[string]string{
			{"role": "system", "content": llmSystemPrompt},
			{"role": "user", "content": user},
		},
	})
	if err != nil {
		return Result{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("llm request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if l.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+l.opts.APIKey)
	}
	resp, err := l.opts.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("llm: no answer within %v", l.opts.Timeout)
		}
		return Result{}, fmt.Errorf("llm: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxLLMResponseBytes+1))
	if err != nil {
		return Result{}, fmt.Errorf("llm: reading the answer: %v", ctx.Err())
	}
	if resp.StatusCode != http.StatusOK {
		return Result{}, fmt.Errorf("llm: endpoint answered HTTP %d", resp.StatusCode)
	}
	if len(raw) > maxLLMResponseBytes {
		return Result{}, fmt.Errorf("llm: answer larger than %d bytes", maxLLMResponseBytes)
	}
	return parseLLMAnswer(raw)
}

// parseLLMAnswer reads a chat-completions response and validates the JSON
// the model wrote.
func parseLLMAnswer(raw []byte) (Result, error) {
	var cc struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
				Refusal string `json:"refusal"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &cc); err != nil || len(cc.Choices) == 0 {
		return Result{}, errors.New("llm: not a chat-completions answer")
	}
	m := cc.Choices[0].Message
	if m.Refusal != "" {
		return Result{}, errors.New("llm: the model refused")
	}
	content := strings.TrimSpace(m.Content)
	// Some models wrap JSON in a code fence.
	content = strings.TrimPrefix(strings.TrimPrefix(content, "```json"), "```")
	content = strings.TrimSpace(strings.TrimSuffix(content, "```"))
	var a struct {
		Intent      string   `json:"intent"`
		Confidence  *float64 `json:"confidence"`
		TargetHints *struct {
			TargetType string `json:"target_type"`
			TargetName string `json:"target_name"`
		} `json:"target_hints"`
	}
	if err := json.Unmarshal([]byte(content), &a); err != nil {
		return Result{}, errors.New("llm: the model's answer is not the JSON asked for")
	}
	if a.Intent != Unknown && !validIntent(a.Intent) {
		return Result{}, fmt.Errorf("llm: unknown intent %.40q", a.Intent)
	}
	if a.Confidence == nil || !(*a.Confidence >= 0 && *a.Confidence <= 1) {
		return Result{}, errors.New("llm: confidence missing or outside [0,1]")
	}
	r := Result{Intent: a.Intent, Confidence: float32(*a.Confidence)}
	if a.Intent == Unknown {
		r.Confidence = 0
		return r, nil
	}
	if h := a.TargetHints; h != nil && strings.TrimSpace(h.TargetName) != "" {
		if !validTargetType(h.TargetType) {
			return Result{}, fmt.Errorf("llm: unknown target_type %.40q", h.TargetType)
		}
		name := strings.TrimSpace(h.TargetName)
		if len(name) > maxLLMTargetBytes || !utf8.ValidString(name) {
			return Result{}, errors.New("llm: target_name too long or not UTF-8")
		}
		typ := h.TargetType
		if typ == "" {
			typ = TargetConcept
		}
		r.Target = Target{Name: name, Type: typ}
	}
	return r, nil
}

func validIntent(s string) bool {
	for _, in := range intents {
		if in == s {
			return true
		}
	}
	return false
}

func validTargetType(s string) bool {
	switch s {
	case "", TargetFile, TargetDirectory, TargetPackage, TargetSymbol, TargetURL, TargetWorkspace, TargetConcept:
		return true
	}
	return false
}

// answerCache keeps the latest LLM answers by prompt hash (least recently
// used out first). A nil cache keeps nothing.
type answerCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of cacheEntry, most recent first
	byKey map[[32]byte]*list.Element
}

type cacheEntry struct {
	key [32]byte
	r   Result
}

func newAnswerCache(n int) *answerCache {
	return &answerCache{max: n, order: list.New(), byKey: map[[32]byte]*list.Element{}}
}

func (c *answerCache) get(k [32]byte) (Result, bool) {
	if c == nil {
		return Result{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return Result{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(cacheEntry).r, true
}

func (c *answerCache) put(k [32]byte, r Result) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok {
		e.Value = cacheEntry{k, r}
		c.order.MoveToFront(e)
		return
	}
	c.byKey[k] = c.order.PushFront(cacheEntry{k, r})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(cacheEntry).key)
	}
}
