package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/engine"
)

// MaxAnswer is the most bytes one tool answer takes: the tools/call result as sent, its
// structured content and the JSON text the SDK puts beside it (for clients that read only
// text) together. An assistant's context holds the first answer whole; the rest is paged.
const MaxAnswer = 4096

// maxLine is the longest one-line string (a title, a reason) an answer carries.
const maxLine = 200

// readOnly marks every tool: none changes anything, so a client need not ask before calling.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}

// addTool registers h as t: read-only, one of MaxConcurrent calls at a time, and an error
// answered to the assistant as a tool error it can read and act on.
func addTool[In, Out any](s *Server, t *mcp.Tool, h func(context.Context, In) (Out, error)) {
	t.Annotations = readOnly
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		ctx = withSession(ctx, req.Session.ID())
		var zero Out
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-ctx.Done():
			return nil, zero, fmt.Errorf("%s: not started: %w", t.Name, ctx.Err())
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, zero, errors.New(clip(engine.WithLimitFlag(err).Error(), MaxAnswer/2))
		}
		return nil, out, nil
	})
}

// boundErrors clips what a refusal says, whoever made it: the SDK answers a tool's input
// that fails its schema with a tool error quoting the input, and an unknown method or a
// malformed request with a protocol error that may quote it too, neither through addTool.
// A 200 KB argument must not come back as a 200 KB answer.
func boundErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var wire *jsonrpc.Error
		switch {
		case errors.As(err, &wire):
			clipped := *wire
			clipped.Message = clipEnds(wire.Message, MaxAnswer/2)
			clipped.Data = nil
			return res, &clipped
		case err != nil:
			return res, errors.New(clipEnds(err.Error(), MaxAnswer/2))
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					t.Text = clipEnds(t.Text, MaxAnswer/2)
				}
			}
		}
		return res, nil
	}
}

// answerSize is the bytes out takes in a tools/call result, as addTool's SDK sends it.
func answerSize(out any) int {
	b, err := json.Marshal(out)
	if err != nil {
		return MaxAnswer + 1
	}
	res := mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
	rb, err := json.Marshal(&res)
	if err != nil {
		return MaxAnswer + 1
	}
	return len(rb) + envelope
}

// maxVersion is the longest version string the handshake and every answer carry.
const maxVersion = 64

// envelope is what the SDK adds to every result for a client of the newer protocol: the
// server's name and version in "_meta" (SEP-2575) and "resultType", counted for the longest
// version, since answerSize does not see the server.
var envelope = func() int {
	impl := &mcp.Implementation{Name: "upgradescope", Title: "upgradescope", Version: strings.Repeat("v", maxVersion)}
	with, err := json.Marshal(&mcp.CallToolResult{Meta: mcp.Meta{mcp.MetaKeyServerInfo: impl}})
	if err != nil {
		panic(err)
	}
	without, err := json.Marshal(&mcp.CallToolResult{})
	if err != nil {
		panic(err)
	}
	return len(with) - len(without) + len(`,"resultType":"complete"`)
}()

// fit is the most of items (at least one, when there is any) that build shows within
// MaxAnswer; build makes the answer holding the first n. Sizes grow with n, so a search
// finds it: doubling from one item until an answer is too large, then halving between the
// last two counts. A page holds tens of items and a report thousands; a binary search over
// them all marshalled half the report first, 25 ms a page of 1,432 findings.
func fit[T any](items []T, build func(n int) any) int {
	over := func(n int) bool { return answerSize(build(n)) > MaxAnswer }
	lo, hi := 0, 1 // the first lo items fit; hi is the next count tried
	for hi <= len(items) && !over(hi) {
		lo, hi = hi, 2*hi
	}
	hi = min(hi, len(items)+1)
	n := lo + sort.Search(hi-lo-1, func(i int) bool { return over(lo + i + 1) })
	return max(n, min(len(items), 1))
}

// clip shortens s to at most n bytes as an answer's JSON carries it, on a rune boundary,
// marking the cut. A character JSON escapes counts as its escape (< is \u003c): a title of
// markup from a custom pack is then no longer than one of letters, and so one line of any
// strings always fits in an answer.
func clip(s string, n int) string {
	if len(s) <= n && plain(s) || jsonLen(s) <= n {
		return s
	}
	used := len("…")
	for i := 0; i < len(s); {
		w, size := jsonRune(s[i:])
		if used += w; used > n {
			return s[:i] + "…"
		}
		i += size
	}
	return s
}

// clipEnds shortens s to at most n bytes as JSON writes them keeping its start and its end,
// where a refusal says why ("…: maxLength 200").
func clipEnds(s string, n int) string {
	if jsonLen(s) <= n {
		return s
	}
	tail := s[max(0, len(s)-n/8):]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	tail = strings.TrimSuffix(clip(tail, n/2), "…")
	return clip(s, n-jsonLen(tail)) + tail
}

// plain reports whether JSON carries s byte for byte: ASCII that needs no escape.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// jsonLen is the bytes encoding/json writes for s inside a string.
func jsonLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		w, size := jsonRune(s[i:])
		n, i = n+w, i+size
	}
	return n
}

// jsonRune is the bytes encoding/json writes for s's first rune, and the rune's length in s.
func jsonRune(s string) (int, int) {
	if c := s[0]; c < utf8.RuneSelf {
		switch {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			return 2, 1
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			return 6, 1
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 6, size // an invalid byte is written \ufffd
	}
	return size, size
}

// encodeCursor makes the opaque "next" of a paged answer: the query it pages and where the
// next page starts, so the assistant passes it back alone.
func encodeCursor[Q any](q Q, at int) string {
	b, _ := json.Marshal(struct {
		Q  Q   `json:"q"`
		At int `json:"at"`
	}{q, at})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a cursor encodeCursor made; anything else is an error naming it.
func decodeCursor[Q any](s string) (Q, int, error) {
	var c struct {
		Q  Q   `json:"q"`
		At int `json:"at"`
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.At < 0 {
		return c.Q, 0, fmt.Errorf("cursor %q: not one this server gave; pass the \"next\" of an answer unchanged", clip(s, 40))
	}
	return c.Q, c.At, nil
}

// pageOf is the page of items from from on, as many as fit in MaxAnswer (at least one,
// when there is any): build makes the answer showing shown (never nil), with next the
// cursor of the page after it, q and where that page starts, or "" at the end.
func pageOf[T, Q, A any](items []T, from int, q Q, build func(shown []T, next string) A) A {
	from = min(from, len(items))
	rest := items[from:]
	page := func(n int) A {
		next := ""
		if from+n < len(items) {
			next = encodeCursor(q, from+n)
		}
		shown := rest[:n:n]
		if shown == nil {
			shown = []T{}
		}
		return build(shown, next)
	}
	return page(fit(rest, func(n int) any { return page(n) }))
}

// listState is a fingerprint of a list a paged answer pages, whole and in order: a cursor
// of a list read anew for each page (the fleet's) carries it, so a page of a list that
// changed in between is refused rather than skipping or repeating what moved. id is what
// of an item counts.
func listState[T any](items []T, id func(T) string) string {
	h := fnv.New64a()
	for _, it := range items {
		_, _ = io.WriteString(h, id(it))
		_, _ = h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// jsonOf is v as JSON, for listState to count every field of a line.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// firstFew is names as a line shows them: the first n, each clipped to width, and "+k"
// counting the rest; nil when there are none.
func firstFew(names []string, n, width int) []string {
	var out []string
	for i, name := range names {
		if i == n {
			return append(out, fmt.Sprintf("+%d", len(names)-n))
		}
		out = append(out, clip(name, width))
	}
	return out
}

// schemaFor is In's JSON schema, inferred as the SDK would, for a tool to narrow.
func schemaFor[In any](narrow func(*jsonschema.Schema)) *jsonschema.Schema {
	sch, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(In), err))
	}
	narrow(sch)
	return sch
}
