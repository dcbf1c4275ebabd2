package spec

// Position returns where the field at path ("build.commands[0]") is written in the spec data,
// or where its nearest written parent is: for messages about a spec value found after loading
// (a shellcheck comment on a command). 0, 0 when the data does not parse.
func Position(data []byte, path string) (line, col int) {
	if len(data) > MaxSpecBytes {
		return 0, 0
	}
	body, e := parseDocument(data)
	if e != nil || body == nil {
		return 0, 0
	}
	d := newDecoder(body)
	var s Spec
	d.decodeTop(body, &s)
	return d.pos.lookup(path)
}
