package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// maxRecord bounds one record: a line, or an element of a document. The API server's
// events stay far below it (etcd holds objects of at most 1.5 MiB) but for
// RequestResponse-level lists, which hold the whole list's response.
const maxRecord = 16 << 20

// lineBuffer is a file's read buffer: a line within it is read in place, a longer one is
// copied, up to maxRecord.
const lineBuffer = 1 << 20

// checkEvery is how many records pass between two looks at the context.
const checkEvery = 1024

// reader reads audit logs into an aggregation, reusing its buffers from file to file.
type reader struct {
	ctx       context.Context
	agg       *Aggregator
	stdin     io.Reader
	stdinRead bool
	err       error // the context's, once it is done

	raw  *bufio.Reader // the file, where gzip's magic is looked for
	zr   *gzip.Reader
	text *bufio.Reader // what the file holds, decompressed
	long []byte        // a line longer than lineBuffer
	doc  docReader

	records int
	// read are the files read so far: a file named twice, or both alone and in a directory
	// (or through a link), is read once.
	read []os.FileInfo
}

func newReader(ctx context.Context, agg *Aggregator, stdin io.Reader) *reader {
	return &reader{ctx: ctx, agg: agg, stdin: stdin}
}

// tick counts a record and, every checkEvery, whether the context is done; it answers
// whether reading should stop.
func (r *reader) tick() bool {
	if r.records++; r.records%checkEvery == 0 && r.err == nil {
		if err := r.ctx.Err(); err != nil {
			r.err = fmt.Errorf("read audit log: %w", err)
		}
	}
	return r.err != nil
}

func (r *reader) readPath(path string) error {
	if path == "-" {
		return r.readStdin()
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	if !info.IsDir() {
		return r.readFile(path)
	}
	files, err := logFiles(path)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := r.readFile(f); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) readStdin() error {
	if r.stdin == nil {
		return errors.New("read audit log from standard input (-): no standard input")
	}
	if r.stdinRead {
		return errors.New("read audit log: standard input (-) named twice; it can be read once")
	}
	r.stdinRead = true
	return r.readStream("-", r.stdin)
}

// logFiles lists the regular files directly in dir (and the links to one), by name.
func logFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read audit log directory: %w", err)
	}
	var files []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Type().IsRegular() {
			files = append(files, p)
		} else if e.Type()&fs.ModeSymlink != 0 {
			if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
				files = append(files, p)
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read audit log directory %s: it holds no file", dir)
	}
	return files, nil
}

func (r *reader) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	defer f.Close()
	// The file opened, not the path: a link and its target are one file.
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	if slices.ContainsFunc(r.read, func(seen os.FileInfo) bool { return os.SameFile(seen, info) }) {
		return nil
	}
	r.read = append(r.read, info)
	return r.readStream(path, f)
}

// readStream reads one file, or standard input, as the source name.
func (r *reader) readStream(name string, src io.Reader) error {
	r.agg.beginSource(name)
	defer r.agg.endSource()
	if r.raw == nil {
		r.raw = bufio.NewReaderSize(src, 64<<10)
		r.text = bufio.NewReaderSize(nil, lineBuffer)
	}
	r.raw.Reset(src)
	var text io.Reader = r.raw
	if magic, _ := r.raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if err := r.openGzip(); err != nil {
			return fmt.Errorf("read audit log %s: not a readable gzip stream: %w", name, err)
		}
		text = r.zr
	}
	r.text.Reset(text)
	lines, line, err := r.framing()
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		r.malformed(location{path: name, line: line, index: -1}, readReason(err))
		return nil
	case lines:
		r.readLines(name, line)
	default:
		r.readDocument(name, line)
	}
	return r.err
}

func (r *reader) openGzip() error {
	if r.zr == nil {
		zr, err := gzip.NewReader(r.raw)
		r.zr = zr
		return err
	}
	return r.zr.Reset(r.raw)
}

// framing skips the whitespace (and a byte-order mark) before the first record and tells
// how the file is framed: JSON lines, or one JSON document holding records. The answer is
// lines unless the file starts with an array or with an object that goes on past its first
// line (printed with indents). A first line longer than lineBuffer is taken for a line: a
// RequestResponse-level event is more common than a document written on one line. It
// answers the line the first record starts on.
func (r *reader) framing() (lines bool, line int64, err error) {
	line = 1
	if bom, _ := r.text.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = r.text.Discard(3)
	}
	for {
		b, err := r.text.ReadByte()
		if err != nil {
			return false, line, err
		}
		if b == '\n' {
			line++
		}
		if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
			continue
		}
		_ = r.text.UnreadByte()
		if b == '[' {
			return false, line, nil
		}
		if b != '{' {
			return true, line, nil
		}
		break
	}
	buf, _ := r.text.Peek(lineBuffer)
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		return true, line, nil
	}
	first := bytes.TrimSpace(buf[:i])
	if jsonValid(first) {
		return true, line, nil
	}
	// A line that is not JSON by itself: the start of an indented document if it opens
	// one, else a broken line among JSON lines.
	switch first[len(first)-1] {
	case '{', '[', ',', ':':
		return false, line, nil
	}
	return true, line, nil
}

// readLines reads JSON lines from r.text, the first being line.
func (r *reader) readLines(name string, line int64) {
	for ; ; line++ {
		b, tooLong, err := r.nextLine()
		loc := location{path: name, line: line, index: -1}
		switch {
		case tooLong:
			r.malformed(loc, fmt.Sprintf("line longer than %d MiB", maxRecord>>20))
		case err == nil || err == io.EOF:
			r.line(b, loc)
		}
		if err == io.EOF || r.err != nil {
			return
		}
		if err != nil {
			// What was read stays counted; the line cut short by the error is not read.
			r.malformed(loc, readReason(err))
			return
		}
	}
}

// nextLine answers the next line, or that it is longer than maxRecord: such a line is read
// through without being kept.
func (r *reader) nextLine() (line []byte, tooLong bool, err error) {
	line, err = r.text.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, false, err
	}
	r.long = appendBounded(r.long[:0], line)
	for {
		line, err = r.text.ReadSlice('\n')
		if len(r.long)+len(line) > maxRecord {
			for err == bufio.ErrBufferFull {
				_, err = r.text.ReadSlice('\n')
			}
			return nil, true, err
		}
		r.long = appendBounded(r.long, line)
		if err != bufio.ErrBufferFull {
			return r.long, false, err
		}
	}
}

// appendBounded appends src to dst growing it to at most maxRecord, which append's
// doubling would pass.
func appendBounded(dst, src []byte) []byte {
	if need := len(dst) + len(src); need > cap(dst) {
		grown := make([]byte, len(dst), max(need, min(2*cap(dst), maxRecord)))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}

// line reads one line: a record, maybe after a timestamp; blank lines are skipped.
func (r *reader) line(b []byte, loc location) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if b[0] != '{' && b[0] != '[' {
		rest, ok := afterTimestamp(b)
		if !ok {
			r.tick()
			r.malformed(loc, "not JSON")
			return
		}
		b = rest
	}
	r.record(b, loc, 0)
}

// afterTimestamp answers the record after an RFC 3339 timestamp and a space, as
// CloudWatch's export to S3 writes each event.
func afterTimestamp(b []byte) ([]byte, bool) {
	i := bytes.IndexByte(b, ' ')
	if i < len("2006-01-02T15:04:05Z") || i > len("2006-01-02T15:04:05.999999999-07:00") {
		return nil, false
	}
	if _, err := time.Parse(time.RFC3339, string(b[:i])); err != nil {
		return nil, false
	}
	rest := bytes.TrimLeft(b[i+1:], " \t")
	if len(rest) == 0 || (rest[0] != '{' && rest[0] != '[') {
		return nil, false
	}
	return rest, true
}

// readReason words a read error. Errors of reading and decompressing say where and how the
// stream broke, never what it held.
func readReason(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "read stopped: the stream ends early (a truncated file?); what came before is counted"
	}
	return "read stopped: " + err.Error() + "; what came before is counted"
}

// location names a record for a malformed entry: the file and line it starts on, and,
// within a document or a record holding records, its JSON pointer.
type location struct {
	path string
	line int64
	// doc, when set, gives the line: the line the decoder is at, less the record's own
	// (raw's) lines.
	doc *docReader
	raw []byte
	// ptr is the pointer of the list holding the record, member and index its place in it;
	// index is -1 when the record is in no list.
	ptr    string
	member string
	index  int
}

func (l location) pointer() string {
	if l.index < 0 {
		return l.ptr
	}
	if l.member == "" {
		return l.ptr + "/" + strconv.Itoa(l.index)
	}
	return l.ptr + "/" + l.member + "/" + strconv.Itoa(l.index)
}

func (l location) String() string {
	line := l.line
	if l.doc != nil {
		line = l.doc.line() - int64(bytes.Count(l.raw, []byte{'\n'}))
	}
	s := l.path + ":" + strconv.FormatInt(line, 10)
	if p := l.pointer(); p != "" {
		s += ": " + p
	}
	return s
}

// malformed counts a record that is not an audit event, naming it while
// MaxAuditMalformed are not yet named.
func (r *reader) malformed(loc location, reason string) {
	name := ""
	if len(r.agg.malformedAt) < inventory.MaxAuditMalformed {
		name = loc.String()
	}
	r.agg.countMalformed(name, reason)
}
