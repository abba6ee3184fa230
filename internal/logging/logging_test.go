package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestLoggersWriteTheirFormatAtTheirLevel(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(&buf, "json", "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("quiet")
	log.Warn("tick failed", "cluster", "prod")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "tick failed" || line["cluster"] != "prod" {
		t.Errorf("json log = %q (%v), want the warning alone", buf.String(), err)
	}
	buf.Reset()
	log, _ = New(&buf, "text", "info")
	log.Info("tick", "duration", "1s")
	if !strings.Contains(buf.String(), "msg=tick duration=1s") {
		t.Errorf("text log = %q, want logfmt", buf.String())
	}
}

func TestUnknownFormatsAndLevelsNameTheChoices(t *testing.T) {
	if _, err := New(nil, "xml", "info"); err == nil || !strings.Contains(err.Error(), "want text or json") {
		t.Errorf("format xml: %v", err)
	}
	if _, err := New(nil, "text", "loud"); err == nil || !strings.Contains(err.Error(), "want debug, info, warn or error") {
		t.Errorf("level loud: %v", err)
	}
}
