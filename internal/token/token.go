// Package token reads bearer tokens the way every command takes them: from a file read again
// at each use (so a mounted Secret can rotate), else a literal, else an environment variable.
// Tokens never appear in errors.
package token

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// Source names where a token comes from; the first non-empty of File, Literal and Env wins.
type Source struct {
	File    string // read at every Token call
	Literal string
	Env     string // the name of an environment variable
}

// ErrNone is returned when no source holds a token.
var ErrNone = errors.New("no token")

// Token returns the current token: surrounding white space trimmed, none inside.
func (s Source) Token() (string, error) {
	var t string
	switch {
	case s.File != "":
		raw, err := smallfile.Read(s.File, smallfile.MaxSecret)
		if err != nil {
			return "", fmt.Errorf("read token file: %w", err)
		}
		t = strings.TrimSpace(string(raw))
	case s.Literal != "":
		t = s.Literal
	case s.Env != "":
		t = strings.TrimSpace(os.Getenv(s.Env))
	}
	if t == "" {
		return "", ErrNone
	}
	if strings.ContainsFunc(t, unicode.IsSpace) {
		return "", errors.New("the token contains white space")
	}
	return t, nil
}
