package server

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"sync"
)

// A dry run inflates every stored inventory and report of the fleet (megabytes each) only to
// decode it: read with io.ReadAll, each grew its buffer by doubling, copying and zeroing
// about twice its size, and left it all to the collector. Inflated into a buffer sized from
// the gzip trailer and taken from a pool, a blob costs one copy and no new large buffer.
// Every stored blob the server decodes is read through inflatePooled.
var inflatePool = sync.Pool{New: func() any { return new(inflateBuffer) }}

type inflateBuffer struct {
	zr  gzip.Reader
	buf bytes.Buffer
}

// inflatePooled inflates a gzip blob the server stored, bounded to limit bytes, into a
// pooled buffer. The bytes are valid until release is called; nothing decoded from them may
// keep a reference (json decoding copies what it keeps).
func inflatePooled(blob []byte, limit int) (plain []byte, release func(), err error) {
	b := inflatePool.Get().(*inflateBuffer)
	release = func() {
		b.buf.Reset()
		inflatePool.Put(b)
	}
	if err := b.zr.Reset(bytes.NewReader(blob)); err != nil {
		release()
		return nil, nil, err
	}
	b.buf.Reset()
	// ISIZE, the trailer's last four bytes, is the inflated size modulo 2^32: a hint only,
	// since a blob of several members or one past 4 GiB spells another number.
	if n := len(blob); n >= 18 {
		if size := int(binary.LittleEndian.Uint32(blob[n-4:])); size <= limit {
			b.buf.Grow(size + bytes.MinRead)
		}
	}
	if _, err := b.buf.ReadFrom(io.LimitReader(&b.zr, int64(limit)+1)); err != nil {
		release()
		return nil, nil, err
	}
	if b.buf.Len() > limit {
		release()
		return nil, nil, errTooLong
	}
	return b.buf.Bytes(), release, nil
}
