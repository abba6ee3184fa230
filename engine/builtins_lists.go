package engine

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

// pieceBytes is what a builtin spends per string it cuts out: the term and the slice slot.
const pieceBytes = termBytes + arrayElemBytes

// split(s, delimiter): a piece per delimiter and one more; an empty delimiter cuts every
// character. Counted only when the bound of one piece per byte is past the budget.
func splitSize(operands []*ast.Term, budget int64) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	d, ok2 := operands[1].Value.(ast.String)
	if !ok1 || !ok2 {
		return 0
	}
	if bound := int64(len(s)+1) * pieceBytes; bound <= budget {
		return bound
	}
	return pieces(string(s), string(d)) * pieceBytes
}

func pieces(s, d string) int64 {
	if d == "" {
		return int64(utf8.RuneCountInString(s))
	}
	return int64(strings.Count(s, d)) + 1
}

// strings.split_n(s, delimiter, n): as split, at most n pieces when n is not negative.
func splitNSize(operands []*ast.Term, budget int64) int64 {
	size := splitSize(operands, budget)
	if n, ok := operands[2].Value.(ast.Number); ok {
		if limit, ok := n.Int64(); ok && limit >= 0 {
			size = min(size, (limit+1)*pieceBytes)
		}
	}
	return size
}

// indexof_n(s, search): a number per occurrence, overlapping ones included; outside ASCII
// OPA also converts s to runes, four bytes each.
func indexOfNSize(operands []*ast.Term, budget int64) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	search, ok2 := operands[1].Value.(ast.String)
	if !ok1 || !ok2 || search == "" {
		return 0
	}
	runes := int64(4 * len(s))
	if bound := int64(len(s)+1)*termBytes + runes; bound <= budget {
		return bound
	}
	var n int64
	for offset := 0; ; n++ {
		i := strings.Index(string(s)[offset:], string(search))
		if i < 0 {
			break
		}
		offset += i + 1
	}
	return n*termBytes + runes
}

// regexList is what a regex builtin makes of each match.
type regexList int

const (
	regexSplit      regexList = iota // regex.split(pattern, s): a piece around each match
	regexFind                        // regex.find_n(pattern, s, n): each match
	regexSubmatches                  // regex.find_all_string_submatch_n(pattern, s, n): each match's groups
)

// regexListSize bounds the matches by one per byte and the number asked for, and counts them
// only when that bound is past the budget.
func regexListSize(kind regexList) sizeFunc {
	return func(operands []*ast.Term, budget int64) int64 {
		pattern, ok1 := operands[0].Value.(ast.String)
		s, ok2 := operands[1].Value.(ast.String)
		if !ok1 || !ok2 {
			return 0
		}
		limit := int64(len(s) + 1)
		if kind != regexSplit {
			if n, ok := operands[2].Value.(ast.Number); ok {
				if asked, ok := n.Int64(); ok && asked >= 0 {
					limit = min(limit, asked)
				}
			}
		}
		// Groups are at most the pattern's opening parentheses until it is compiled.
		perMatch := kind.perMatch(strings.Count(string(pattern), "("))
		if bound := (limit + 1) * perMatch; bound <= budget {
			return bound
		}
		re, err := regexp.Compile(string(pattern))
		if err != nil {
			return 0
		}
		perMatch = kind.perMatch(re.NumSubexp())
		var n int64
		eachMatch(re, string(s), func(string) bool { n++; return n < limit && (n+1)*perMatch <= budget })
		return (n + 1) * perMatch
	}
}

// perMatch is what a match costs: Go's regexp keeps each match's indexes in a slice of its
// own, then OPA a string and a term per piece.
func (k regexList) perMatch(groups int) int64 {
	if k == regexSubmatches {
		return int64(groups+1)*pieceBytes + termBytes + indexBytes*int64(groups+1)
	}
	return regexMatchBytes
}

const regexMatchBytes = 256

// eachMatch calls f with re's matches in s, as the All functions find them, until f returns
// false, building nothing larger than s. (A regexp cannot be resumed at an offset of the
// same text, so the walk is ended by a panic, recovered here.)
func eachMatch(re *regexp.Regexp, s string, f func(match string) bool) {
	defer func() {
		if r := recover(); r != nil && r != errStop { //nolint:errorlint // our own sentinel
			panic(r)
		}
	}()
	re.ReplaceAllStringFunc(s, func(m string) string {
		if !f(m) {
			panic(errStop)
		}
		return ""
	})
}

// array.concat(a, b): a slot for each element of both.
func arrayConcatSize(operands []*ast.Term, _ int64) int64 {
	return int64(width(operands[0].Value)+width(operands[1].Value)) * arrayElemBytes
}

// array.flatten(arr): a slot for each element of each nested array, and for each other
// element. The nested arrays may all be one array, held once.
func arrayFlattenSize(operands []*ast.Term, _ int64) int64 {
	var n int64
	each(operands[0].Value, func(t *ast.Term) bool {
		if nested, ok := t.Value.(*ast.Array); ok {
			n += int64(nested.Len())
		} else {
			n++
		}
		return true
	})
	return n * arrayElemBytes
}

// net.cidr_contains_matches(cidrs, addresses): every pair is tested, and each match is added
// to a set in which the [i, j] pairs' hashes (i + j) collide, so time grows faster than the
// pairs: a KiB a pair holds a call to about 16,000 pairs at the default share, a second.
func cidrMatchesSize(operands []*ast.Term, _ int64) int64 {
	count := func(v ast.Value) int64 {
		if _, ok := v.(ast.String); ok {
			return 1
		}
		return int64(width(v))
	}
	return saturatingMul(saturatingMul(count(operands[0].Value), count(operands[1].Value)), cidrPairBytes)
}

const cidrPairBytes = 1024

// graph.reachable_paths(graph, initial): every path without a cycle from the initial nodes,
// as an array, and at each step a copy of the nodes on the path. There can be exponentially
// many, so they are counted as OPA walks them, until the count passes the budget.
func reachablePathsSize(operands []*ast.Term, budget int64) int64 {
	graph, ok := operands[0].Value.(ast.Object)
	if !ok {
		return 0
	}
	w := pathWalk{graph: graph, budget: budget, onPath: map[int][]*ast.Term{}}
	each(operands[1].Value, func(node *ast.Term) bool {
		edges := graph.Get(node)
		switch {
		case edges == nil:
		case width(edges.Value) == 0:
			w.add(1)
		default:
			w.push(node)
			each(edges.Value, func(n *ast.Term) bool { w.visit(n, 1); return w.size <= budget })
			w.pop(node)
		}
		return w.size <= budget
	})
	return w.size
}

// pathWalk follows OPA's pathBuilder, counting instead of building.
type pathWalk struct {
	graph  ast.Object
	budget int64
	size   int64
	onPath map[int][]*ast.Term // the nodes on the current path, by hash
}

// visit is pathBuilder(graph, node, a path of length n, the path's nodes).
func (w *pathWalk) visit(node *ast.Term, n int64) {
	edges := w.graph.Get(node)
	if edges == nil {
		w.add(n)
		return
	}
	if width(edges.Value) == 0 {
		w.add(n + 1)
		return
	}
	w.size += (n + 1) * termBytes // the copy of the path's nodes
	w.push(node)
	each(edges.Value, func(next *ast.Term) bool {
		if w.on(next) {
			w.add(n + 1)
		} else {
			w.size += (n + 1) * arrayElemBytes // the copy of the path
			w.visit(next, n+1)
		}
		return w.size <= w.budget
	})
	w.pop(node)
}

func (w *pathWalk) add(n int64) { w.size += n*arrayElemBytes + termBytes }

func (w *pathWalk) push(t *ast.Term) { w.onPath[t.Hash()] = append(w.onPath[t.Hash()], t) }

func (w *pathWalk) pop(t *ast.Term) {
	ts := w.onPath[t.Hash()]
	w.onPath[t.Hash()] = ts[:len(ts)-1]
}

func (w *pathWalk) on(t *ast.Term) bool {
	for _, u := range w.onPath[t.Hash()] {
		if u.Equal(t) {
			return true
		}
	}
	return false
}
