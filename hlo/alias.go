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
	var attr *Attr
	for i := range m.Attrs {
		if m.Attrs[i].Name == "input_output_alias" {
			attr = &m.Attrs[i]
		}
	}
	if attr == nil {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return &Error{Pos: attr.Pos, Msg: "input_output_alias: " + fmt.Sprintf(format, args...)}
	}
	v := strings.TrimSpace(attr.Value)
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return nil, bad("want {{output}: (param, {index}, kind), ...}")
	}
	body := strings.TrimSpace(v[1 : len(v)-1])
	var out []Alias
	// Entries end at the ")" that closes their parameter part.
	for body != "" {
		end := strings.Index(body, ")")
		if end < 0 {
			return nil, bad("unterminated entry %q", body)
		}
		entry := strings.TrimSpace(body[:end+1])
		body = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(body[end+1:]), ","))
		mm := aliasEntry.FindStringSubmatch(entry)
		if mm == nil {
			return nil, bad("cannot read entry %q", entry)
		}
		a := Alias{Must: mm[4] == "must-alias"}
		if mm[4] != "" && mm[4] != "must-alias" && mm[4] != "may-alias" {
			return nil, bad("unknown alias kind %q", mm[4])
		}
		var err error
		if a.Output, err = parseIntList("{" + mm[1] + "}"); err != nil {
			return nil, bad("output index: %v", err)
		}
		if a.ParamIndex, err = parseIntList("{" + mm[3] + "}"); err != nil {
			return nil, bad("parameter index: %v", err)
		}
		if a.Param, err = strconv.ParseInt(mm[2], 10, 64); err != nil {
			return nil, bad("parameter number: %v", err)
		}
		if m.Entry != nil && (a.Param < 0 || int(a.Param) >= len(m.Entry.Params)) {
			return nil, bad("parameter %d does not exist (the entry has %d)", a.Param, len(m.Entry.Params))
		}
		out = append(out, a)
	}
	return out, nil
}

var donorEntry = regexp.MustCompile(`^\(\s*(\d+)\s*,\s*\{([^{}]*)\}\s*\)$`)

// BufferDonors parses the module header's buffer_donor attribute, `{
// (0, {}), (2, {1}) }`: parameters (at an index path) whose memory the
// program may reuse, with no result to alias them to; as Alias entries
// without Output. None gives nil.
func (m *Module) BufferDonors() ([]Alias, error) {
	var attr *Attr
	for i := range m.Attrs {
		if m.Attrs[i].Name == "buffer_donor" {
			attr = &m.Attrs[i]
		}
	}
	if attr == nil {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return &Error{Pos: attr.Pos, Msg: "buffer_donor: " + fmt.Sprintf(format, args...)}
	}
	v := strings.TrimSpace(attr.Value)
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return nil, bad("want {(param, {index}), ...}")
	}
	body := strings.TrimSpace(v[1 : len(v)-1])
	var out []Alias
	for body != "" {
		end := strings.Index(body, ")")
		if end < 0 {
			return nil, bad("unterminated entry %q", body)
		}
		entry := strings.TrimSpace(body[:end+1])
		body = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(body[end+1:]), ","))
		mm := donorEntry.FindStringSubmatch(entry)
		if mm == nil {
			return nil, bad("cannot read entry %q", entry)
		}
		var a Alias
		var err error
		if a.ParamIndex, err = parseIntList("{" + mm[2] + "}"); err != nil {
			return nil, bad("parameter index: %v", err)
		}
		if a.Param, err = strconv.ParseInt(mm[1], 10, 64); err != nil {
			return nil, bad("parameter number: %v", err)
		}
		if m.Entry != nil && int(a.Param) >= len(m.Entry.Params) {
			return nil, bad("parameter %d does not exist (the entry has %d)", a.Param, len(m.Entry.Params))
		}
		out = append(out, a)
	}
	return out, nil
}
