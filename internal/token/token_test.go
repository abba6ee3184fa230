package token

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheFileWinsAndIsReadAgainAtEveryUse(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Source{File: file, Literal: "literal", Env: "UPGRADESCOPE_TEST_TOKEN"}
	if got, err := s.Token(); got != "first" || err != nil {
		t.Fatalf("Token = %q, %v; want the file's token", got, err)
	}
	if err := os.WriteFile(file, []byte("rotated"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Token(); got != "rotated" {
		t.Errorf("Token after rotation = %q, want rotated", got)
	}
}

func TestALiteralThenTheEnvironment(t *testing.T) {
	t.Setenv("UPGRADESCOPE_TEST_TOKEN", " from-env ")
	if got, _ := (Source{Literal: "lit", Env: "UPGRADESCOPE_TEST_TOKEN"}).Token(); got != "lit" {
		t.Errorf("Token = %q, want the literal", got)
	}
	if got, _ := (Source{Env: "UPGRADESCOPE_TEST_TOKEN"}).Token(); got != "from-env" {
		t.Errorf("Token = %q, want the trimmed environment value", got)
	}
}

func TestMissingOrMalformedTokensAreRefusedWithoutShowingThem(t *testing.T) {
	if _, err := (Source{}).Token(); !errors.Is(err, ErrNone) {
		t.Errorf("empty source: %v, want ErrNone", err)
	}
	_, err := (Source{Literal: "secret value"}).Token()
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("token with a space: %v, want a refusal that does not show it", err)
	}
	if _, err := (Source{File: filepath.Join(t.TempDir(), "absent")}).Token(); err == nil {
		t.Error("a missing token file was accepted")
	}
}
