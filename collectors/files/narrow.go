package files

import "bytes"

// dropped are, per kind, the keys whose subtrees no rule reads and which make up most of a
// document's bytes: a CRD's openAPIV3Schema is often hundreds of kilobytes, and a workload's
// containers carry probes, environment, ports and resources around the one field read from
// them, the image. None of them is, or holds, a field the collector reads (apiVersion, kind,
// metadata, the pod template's labels and images, a CRD's names, versions and conversion,
// and what the pre-flight Recorder reads of a pod template: volumes, affinity and topology
// spread constraints), so the yaml parser is handed the same document without them. The
// containers' command and args are dropped only where no component can be named
// (mayRunComponent).
var dropped = map[string]map[string]bool{
	"CustomResourceDefinition": set("openAPIV3Schema"),
	"Pod":                      workloadDrops,
	"Deployment":               workloadDrops,
	"DaemonSet":                workloadDrops,
	"StatefulSet":              workloadDrops,
	"ReplicaSet":               workloadDrops,
	"Job":                      workloadDrops,
	"CronJob":                  workloadDrops,
}

var workloadDrops = set(
	// containers
	"args", "command", "env", "envFrom", "ports", "livenessProbe", "readinessProbe", "startupProbe",
	"resources", "resizePolicy", "volumeMounts", "volumeDevices", "securityContext", "lifecycle",
	// pod spec
	"tolerations", "nodeSelector", "dnsConfig",
	"hostAliases", "imagePullSecrets", "readinessGates", "resourceClaims", "schedulingGates",
	// workload spec
	"selector", "strategy", "updateStrategy", "volumeClaimTemplates", "persistentVolumeClaimRetentionPolicy",
)

// droppedArgs is dropped keeping containers' command and args.
var droppedArgs = keepingArgs(dropped)

// keepingArgs is drops without containers' command and args, which name a control-plane
// component and hold its flags.
func keepingArgs(drops map[string]map[string]bool) map[string]map[string]bool {
	out := make(map[string]map[string]bool, len(drops))
	for kind, drop := range drops {
		keep := make(map[string]bool, len(drop))
		for k := range drop {
			if k != "command" && k != "args" {
				keep[k] = true
			}
		}
		out[kind] = keep
	}
	return out
}

// componentWords are what a Pod or DaemonSet running a control-plane component or
// kube-proxy holds in its text: the binary's name ("kube-apiserver", "hyperkube") or,
// spelling it otherwise, a backslash escape or a !!binary tag. A document holding none of
// them names no component, so its command and args may be dropped.
var componentWords = [][]byte{[]byte("kube-"), []byte("hyperkube"), []byte(`\`), []byte("binary")}

// mayRunComponent says whether a document of this kind may run a component whose flags the
// pre-flight Recorder reads from command and args.
func mayRunComponent(kind string, text []byte) bool {
	if kind != "Pod" && kind != "DaemonSet" {
		return false
	}
	for _, w := range componentWords {
		if bytes.Contains(text, w) {
			return true
		}
	}
	return false
}

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// narrow blanks the lines of every block-style subtree under a key in drop, keeping the line
// count so later lines keep their numbers, and appends the result to out. A subtree is the
// key's line and every following line indented deeper, or at the same depth starting a
// sequence item (an indentless sequence); blank lines and comments inside it go too, and so
// do the lines a quoted scalar or flow collection opened in it runs on to.
//
// It only narrows what it reads with certainty: ok is false, and the document must be parsed
// whole, when nothing was dropped, when a line is indented with a tab, when a quoted scalar or
// flow collection on a kept line does not close on it, or when a dropped line may define an
// anchor (an alias elsewhere could name it). Block scalar text is never read as keys. A
// narrowed document the parser refuses is parsed whole too.
func narrow(text []byte, drop map[string]bool, out []byte) (_ []byte, ok bool) {
	// Indentation of the dropped key, of a kept block scalar's line, of a dropped one's.
	skip, scalar, skipScalar := -1, -1, -1
	var open flowState // a quoted scalar or flow collection a dropped line left open
	narrowed := false
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i+1], text[i+1:]
		} else {
			text = nil
		}
		content := bytes.TrimLeft(line, " ")
		indent := len(line) - len(content)
		body := trimTrailing(content)
		blank := len(body) == 0 || body[0] == '#'
		switch {
		case open.isOpen():
			if open.scan(body); anchorLike(body) {
				return out, false
			}
			out = append(out, '\n') // runs on from a dropped line, whatever its indentation
			continue
		case scalar >= 0 && (blank || indent > scalar):
			out = append(out, line...) // block scalar text, kept as it is
			continue
		case skipScalar >= 0 && (blank || indent > skipScalar):
			out = append(out, '\n') // block scalar text in a dropped subtree
			continue
		}
		scalar, skipScalar = -1, -1
		if len(body) > 0 && body[0] == '\t' {
			return out, false
		}
		if skip >= 0 && (blank || indent > skip || indent == skip && isItem(body)) {
			if open.scan(body); anchorLike(body) {
				return out, false
			}
			if _, _, value := splitLine(body); !blank && isBlockScalar(value) {
				skipScalar = indent
			}
			out = append(out, '\n')
			continue
		}
		skip = -1
		if blank {
			out = append(out, line...)
			continue
		}
		column, key, value := splitLine(body)
		if key != nil && column == 0 && drop[string(key)] {
			if open.scan(body); anchorLike(body) {
				return out, false
			}
			if isBlockScalar(value) {
				skipScalar = indent
			}
			skip, narrowed = indent, true
			out = append(out, '\n')
			continue
		}
		var kept flowState
		if kept.scan(body); kept.isOpen() {
			return out, false
		}
		if isBlockScalar(value) {
			scalar = indent
		}
		out = append(out, line...)
	}
	return out, narrowed && !open.isOpen()
}

// trimTrailing drops a line's trailing spaces and line break.
func trimTrailing(b []byte) []byte {
	n := len(b)
	for n > 0 && (b[n-1] == ' ' || b[n-1] == '\r' || b[n-1] == '\n') {
		n--
	}
	return b[:n]
}

// anchorLike is true when the line may define an anchor: an "&" where a node can start.
func anchorLike(body []byte) bool {
	for i := bytes.IndexByte(body, '&'); i >= 0; {
		if i == 0 || nodeStart(body[i-1]) {
			return true
		}
		next := bytes.IndexByte(body[i+1:], '&')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// nodeStart is true for a byte after which a flow node can start.
func nodeStart(c byte) bool { return c == ' ' || c == '\t' || c == '[' || c == '{' || c == ',' }

// isItem is true for a line that starts a sequence item.
func isItem(body []byte) bool {
	return body[0] == '-' && (len(body) == 1 || body[1] == ' ')
}

// splitLine reads a line's content as sequence-item dashes ("- - "), then a plain key and its
// value, or just a value. column is where the key or value starts after the dashes.
func splitLine(body []byte) (column int, key, value []byte) {
	for column < len(body) && isItem(body[column:]) {
		column++
		for column < len(body) && body[column] == ' ' {
			column++
		}
	}
	rest := body[column:]
	for i, c := range rest {
		switch {
		case c == ':' && (i+1 == len(rest) || rest[i+1] == ' '):
			return column, rest[:i], bytes.TrimLeft(rest[i+1:], " ")
		case !isKeyByte(c):
			return column, nil, rest
		}
	}
	return column, nil, rest
}

// isKeyByte is true for the bytes of a plain Kubernetes field name or label key.
func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/'
}

// isBlockScalar is true for a block scalar indicator: "|", ">", with chomping and indentation
// indicators and an optional comment.
func isBlockScalar(value []byte) bool {
	if len(value) == 0 || value[0] != '|' && value[0] != '>' {
		return false
	}
	for _, c := range value[1:] {
		switch {
		case c == '+' || c == '-' || c >= '1' && c <= '9':
		case c == ' ' || c == '#':
			return true
		default:
			return false
		}
	}
	return true
}

// flowState follows quoted scalars and flow collections from line to line: which quote is
// open, and how deep the brackets are.
type flowState struct {
	quote byte
	depth int
}

func (s *flowState) isOpen() bool { return s.quote != 0 || s.depth > 0 }

// scan reads one line's content. A quote or bracket opens only where a node can start; a
// comment ends the line outside quotes. It jumps from one byte that can change its state to
// the next: the scan runs on every line of every document.
func (s *flowState) scan(body []byte) {
	for i := 0; i < len(body); i++ {
		if s.quote != 0 {
			i = s.inQuote(body, i)
			continue
		}
		next := indexIn(body[i:], &flowBytes)
		if next < 0 {
			return
		}
		i += next
		switch c := body[i]; c {
		case '"', '\'':
			if s.startsAt(body, i) {
				s.quote = c
			}
		case '#':
			if i > 0 && (body[i-1] == ' ' || body[i-1] == '\t') {
				return
			}
		case '[', '{':
			if s.depth > 0 || s.startsAt(body, i) {
				s.depth++
			}
		case ']', '}':
			if s.depth > 0 {
				s.depth--
			}
		}
	}
}

// byteSet is a set of bytes, looked up by value.
type byteSet [256]bool

func newByteSet(chars string) *byteSet {
	var s byteSet
	for i := range len(chars) {
		s[chars[i]] = true
	}
	return &s
}

// indexIn is the index of the first byte of b in set, or -1: bytes.IndexAny, without building
// the set on every call.
func indexIn(b []byte, set *byteSet) int {
	for i, c := range b {
		if set[c] {
			return i
		}
	}
	return -1
}

var (
	// flowBytes are the bytes outside quotes that can change a flowState.
	flowBytes = *newByteSet("\"'#[]{}")
	// openers are the bytes that can leave a line open: a quote or an opening bracket.
	openers      = *newByteSet("\"'[{")
	doubleQuoted = *newByteSet("\"\\")
	singleQuoted = *newByteSet("'")
)

// inQuote reads the open quoted scalar from body[i] and returns the index of its closing
// quote, or the last index of the line when it stays open.
func (s *flowState) inQuote(body []byte, i int) int {
	for ; i < len(body); i++ {
		stop := &doubleQuoted
		if s.quote == '\'' {
			stop = &singleQuoted
		}
		next := indexIn(body[i:], stop)
		if next < 0 {
			return len(body)
		}
		i += next
		switch c := body[i]; {
		case c == '\\':
			i++ // an escape in a double-quoted scalar
		case c == '\'' && i+1 < len(body) && body[i+1] == '\'':
			i++ // '' in a single-quoted scalar
		default:
			s.quote = 0
			return i
		}
	}
	return i
}

// startsAt is true when a node can start at body[i]: at the line's start, after a space, or
// inside a flow collection after its punctuation.
func (s *flowState) startsAt(body []byte, i int) bool {
	return i == 0 || body[i-1] == ' ' || body[i-1] == '\t' || s.depth > 0 && (nodeStart(body[i-1]) || body[i-1] == ':')
}
