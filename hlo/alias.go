package hlo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Alias is one entry of a module's input_output_alias: the result at
// index path Output may live in the buffer of parameter Param at index
// path ParamIndex ("may-alias"), or must ("must-alias").
type Alias struct {
	Output     []int64
	Param      int64
	ParamIndex []int64
	Must       bool
}

var aliasEntry = regexp.MustCompile(`^\{([^{}]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([^{}]*)\}\s*(?:,\s*([a-z-]+)\s*)?\)$`)

// InputOutputAlias parses the module header's input_output_alias
// attribute, `{ {0}: (1, {}, may-alias), ... }`; none gives nil.
func (m *Module) InputOutputAlias() ([]Alias, error) {
	entries, bad, err := m.headerEntries("input_output_alias", "{{output}: (param, {index}, kind), ...}")
	if err != nil || entries == nil {
		return nil, err
	}
	var out []Alias
	for _, entry := range entries {
		mm := aliasEntry.FindStringSubmatch(entry)
		if mm == nil {
			return nil, bad("cannot read entry %q", entry)
		}
		a := Alias{Must: mm[4] == "must-alias"}
		if mm[4] != "" && mm[4] != "must-alias" && mm[4] != "may-alias" {
			return nil, bad("unknown alias kind %q", mm[4])
		}
		if a.Output, err = parseIntList("{" + mm[1] + "}"); err != nil {
			return nil, bad("output index: %v", err)
		}
		if a.Param, a.ParamIndex, err = m.param(mm[2], mm[3], bad); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// headerEntries finds the module header's attribute name, a braced
// list of entries that each end at the ")" closing their parameter part,
// and returns the entries; nil where the header has no such attribute.
// bad makes the attribute's errors (want: its form).
func (m *Module) headerEntries(name, want string) (entries []string, bad func(format string, args ...any) error, err error) {
	var attr *Attr
	for i := range m.Attrs {
		if m.Attrs[i].Name == name {
			attr = &m.Attrs[i]
		}
	}
	if attr == nil {
		return nil, nil, nil
	}
	bad = func(format string, args ...any) error {
		return &Error{Pos: attr.Pos, Msg: name + ": " + fmt.Sprintf(format, args...)}
	}
	v := strings.TrimSpace(attr.Value)
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return nil, nil, bad("want %s", want)
	}
	body := strings.TrimSpace(v[1 : len(v)-1])
	entries = []string{}
	for body != "" {
		end := strings.Index(body, ")")
		if end < 0 {
			return nil, nil, bad("unterminated entry %q", body)
		}
		entries = append(entries, strings.TrimSpace(body[:end+1]))
		body = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(body[end+1:]), ","))
	}
	return entries, bad, nil
}

// param reads an entry's parameter number and index path, checked
// against the entry computation.
func (m *Module) param(num, index string, bad func(format string, args ...any) error) (int64, []int64, error) {
	p, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, nil, bad("parameter number: %v", err)
	}
	ix, err := parseIntList("{" + index + "}")
	if err != nil {
		return 0, nil, bad("parameter index: %v", err)
	}
	if m.Entry != nil && (p < 0 || int(p) >= len(m.Entry.Params)) {
		return 0, nil, bad("parameter %d does not exist (the entry has %d)", p, len(m.Entry.Params))
	}
	return p, ix, nil
}

var donorEntry = regexp.MustCompile(`^\(\s*(\d+)\s*,\s*\{([^{}]*)\}\s*\)$`)

// BufferDonors parses the module header's buffer_donor attribute, `{
// (0, {}), (2, {1}) }`: parameters (at an index path) whose memory the
// program may reuse, with no result to alias them to; as Alias entries
// without Output. None gives nil.
func (m *Module) BufferDonors() ([]Alias, error) {
	entries, bad, err := m.headerEntries("buffer_donor", "{(param, {index}), ...}")
	if err != nil || entries == nil {
		return nil, err
	}
	var out []Alias
	for _, entry := range entries {
		mm := donorEntry.FindStringSubmatch(entry)
		if mm == nil {
			return nil, bad("cannot read entry %q", entry)
		}
		var a Alias
		if a.Param, a.ParamIndex, err = m.param(mm[1], mm[2], bad); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
