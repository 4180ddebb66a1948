// Package cache is vkjit's persistent on-disk cache: compiled programs
// (SPIR-V and the executable plan), keyed by a hash of everything that
// changes them, so that a second run of a module skips the compiler.
//
// Entries are files named by their key. Writes go to a temporary file in
// the same directory and are renamed into place, so readers in other
// processes see a whole entry or none; every entry carries a checksum,
// and an entry that is corrupt, truncated or written by another format
// version is removed with a warning and counted as a miss. The cache
// keeps its total size under a limit by removing the entries used least
// recently (a hit refreshes an entry's modification time). It knows its
// size from a hint file that each write adds to, and looks at every
// entry only when the hint passes the limit (or, now and then, to put
// right what concurrent writers' lost additions left out): a scan per
// write took 290 ms of each compile's 380 in a cache of 39,572 entries.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zeebo/xxh3"
)

// format is the entry format version: a change makes old entries misses.
// Format 2 added the key to the entry.
const format = 2

// magic opens every entry.
var magic = [4]byte{'V', 'K', 'J', 'C'}

// An entry is: magic, format (4 bytes), the key's length (4), the
// payload's length (8), a checksum of key and payload (8), then the key
// and the payload. headerSize is the fixed part.
const headerSize = 4 + 4 + 4 + 8 + 8

// DefaultLimit is the size limit when none is given: 1 GiB.
const DefaultLimit = 1 << 30

// sizeFile holds the hint of the entries' total size, in decimal.
const sizeFile = "size"

// rescanOdds is one in how many writes scans the entries even under the
// limit: processes that write at once each add to the hint they read,
// and one's addition can overwrite another's.
const rescanOdds = 256

// Cache is one cache directory.
type Cache struct {
	dir   string
	limit int64
	// Warn receives a line for each entry dropped as corrupt (default:
	// none); the caller decides where warnings go.
	Warn func(string)
}

// Open opens (creating) the cache in dir with a size limit in bytes.
func Open(dir string, limit int64) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Cache{dir: dir, limit: limit}, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Key hashes the parts (length-prefixed, so that no two lists of parts
// collide by concatenation) into an entry name: SHA-256, so that no two
// modules' keys meet by accident or by construction.
func Key(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+".vkjit") }

func (c *Cache) warn(format string, args ...any) {
	if c.Warn != nil {
		c.Warn(fmt.Sprintf(format, args...))
	}
}

// Get returns the entry for key. A missing entry is a miss; a damaged
// one is removed, reported through Warn, and is a miss too.
func (c *Cache) Get(key string) ([]byte, bool) {
	p := c.path(key)
	b, err := os.ReadFile(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warn("vkjit cache: reading %s: %v", p, err)
		}
		return nil, false
	}
	payload, err := decode(b, key)
	if err != nil {
		c.warn("vkjit cache: dropping %s: %v", p, err)
		os.Remove(p)
		return nil, false
	}
	now := time.Now()
	os.Chtimes(p, now, now) // least recently used goes first
	return payload, true
}

// encode makes the entry holding data under key.
func encode(key string, data []byte) []byte {
	b := make([]byte, headerSize, headerSize+len(key)+len(data))
	copy(b, magic[:])
	binary.LittleEndian.PutUint32(b[4:], format)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(key)))
	binary.LittleEndian.PutUint64(b[12:], uint64(len(data)))
	b = append(append(b, key...), data...)
	binary.LittleEndian.PutUint64(b[20:], xxh3.Hash(b[headerSize:]))
	return b
}

// decode returns the payload of entry b, which must be filed under key.
func decode(b []byte, key string) ([]byte, error) {
	if len(b) < headerSize {
		return nil, fmt.Errorf("truncated (%d bytes)", len(b))
	}
	if [4]byte(b[:4]) != magic {
		return nil, fmt.Errorf("not a vkjit cache entry")
	}
	if v := binary.LittleEndian.Uint32(b[4:]); v != format {
		return nil, fmt.Errorf("format %d, this vkjit reads %d", v, format)
	}
	kn := uint64(binary.LittleEndian.Uint32(b[8:]))
	n := binary.LittleEndian.Uint64(b[12:])
	if rest := uint64(len(b) - headerSize); kn > rest || n != rest-kn {
		return nil, fmt.Errorf("truncated: %d bytes after the header, the header says %d + %d", rest, kn, n)
	}
	if sum := binary.LittleEndian.Uint64(b[20:]); sum != xxh3.Hash(b[headerSize:]) {
		return nil, fmt.Errorf("checksum mismatch")
	}
	if k := string(b[headerSize : headerSize+kn]); k != key {
		return nil, fmt.Errorf("the entry is for key %s, not this one (copied or renamed?)", k)
	}
	return b[headerSize+kn:], nil
}

// Put stores data under key, atomically, then trims the cache to its
// limit.
func (c *Cache) Put(key string, data []byte) error {
	b := encode(key, data)
	added := int64(len(b))
	if info, err := os.Stat(c.path(key)); err == nil {
		added -= info.Size() // written over
	}
	if err := c.writeFile(c.path(key), b); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	total, ok := c.readSize()
	if !ok || total+added > c.limit || rand.IntN(rescanOdds) == 0 {
		return c.trim()
	}
	c.writeSize(total + added)
	return nil
}

// readSize reads the size hint; false where there is none to trust.
func (c *Cache) readSize() (int64, bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, sizeFile))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	return n, err == nil && n >= 0
}

// writeSize replaces the size hint, atomically (a reader sees the old
// number or the new one); the hint is only a hint, so a failure to write
// it leaves the next write to scan.
func (c *Cache) writeSize(n int64) {
	c.writeFile(filepath.Join(c.dir, sizeFile), []byte(strconv.FormatInt(n, 10)+"\n"))
}

// writeFile writes b to path atomically: to a temporary file in the
// cache's directory (one Clear removes if a crash leaves it), renamed
// into place, so that readers in other processes see all of it or none.
func (c *Cache) writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(c.dir, "tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// entry is one file of the cache.
type entry struct {
	path string
	size int64
	used time.Time
}

func (c *Cache) entries() ([]entry, error) {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	var out []entry
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".vkjit") {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile by another process
		}
		out = append(out, entry{filepath.Join(c.dir, de.Name()), info.Size(), info.ModTime()})
	}
	return out, nil
}

// trim removes the least recently used entries while the cache is over
// its limit.
func (c *Cache) trim() error {
	es, err := c.entries()
	if err != nil {
		return err
	}
	var total int64
	for _, e := range es {
		total += e.size
	}
	sort.Slice(es, func(i, j int) bool { return es[i].used.Before(es[j].used) })
	for _, e := range es {
		if total <= c.limit {
			break
		}
		if err := os.Remove(e.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= e.size
		}
	}
	c.writeSize(total)
	return nil
}

// Stats describes the cache's contents.
type Stats struct {
	Dir     string
	Entries int
	Bytes   int64
	Limit   int64
}

// Stats counts the entries and their bytes.
func (c *Cache) Stats() (Stats, error) {
	es, err := c.entries()
	if err != nil {
		return Stats{}, err
	}
	s := Stats{Dir: c.dir, Entries: len(es), Limit: c.limit}
	for _, e := range es {
		s.Bytes += e.size
	}
	return s, nil
}

// Clear removes every entry (and stray temporary files).
func (c *Cache) Clear() error {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".vkjit") || strings.HasPrefix(de.Name(), "tmp-") || de.Name() == sizeFile {
			if err := os.Remove(filepath.Join(c.dir, de.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("cache: %w", err)
			}
		}
	}
	return nil
}
