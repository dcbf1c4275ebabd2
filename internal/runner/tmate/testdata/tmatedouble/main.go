// Command tmatedouble is a test double for tmate, built by the tmate package
// tests. It implements the flags and subcommands the gate uses, with tmate's
// messages and exit codes:
//
//	tmate [-S socket] [-f conf] [-a authorized_keys] COMMAND
//	  new-session -d              start the "server" (creates the socket file)
//	  wait tmate-ready            block until the session is ready
//	  display -p FORMAT           #{tmate_ssh}, #{tmate_web}, #{tmate_num_clients}, ...
//	  has-session [-t NAME]       exit 0 while the session lives
//	  kill-session [-t NAME]      end the session (removes the socket)
//
// There is no daemon: the session's state lives in files next to the socket,
// so a test can flip it:
//
//	SOCKET               exists while the server runs (remove it: the server died)
//	SOCKET.ready         written by new-session; wait tmate-ready waits for it
//	SOCKET.clients       number of attached clients (write "1": someone attached)
//	SOCKET.ended         when present has-session fails (the session ended)
//	SOCKET.conf          the server settings read from -f
//
// Environment:
//
//	TMATE_DOUBLE_LOG      append one JSON line per call: argv and the contents
//	                      of the -a and -f files
//	TMATE_DOUBLE_READY    "never": the session never becomes ready
//	TMATE_DOUBLE_CLIENTS  initial client count (default 0)
//	TMATE_DOUBLE_FAIL     a subcommand that fails with exit 1
//	TMATE_DOUBLE_HANG     a subcommand that hangs until killed
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"time"
)

const usage = "usage: tmate [-2CluvV] [-c shell-command] [-f file] [-L socket-name] [-S socket-path] [command [flags]]"

type call struct {
	Argv  []string          `json:"argv"`
	Files map[string]string `json:"files,omitempty"`
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	return 1
}

func run(args []string) int {
	c := call{Argv: args}
	var socket, conf, keys string
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		flag := args[i]
		if flag != "-S" && flag != "-f" && flag != "-a" {
			logCall(c)
			return fail("tmate: unknown option -- %s\n%s", strings.TrimPrefix(flag, "-"), usage)
		}
		if i+1 >= len(args) {
			logCall(c)
			return fail("tmate: option requires an argument -- %s\n%s", strings.TrimPrefix(flag, "-"), usage)
		}
		i++
		switch flag {
		case "-S":
			socket = args[i]
		case "-f":
			conf = args[i]
		case "-a":
			keys = args[i]
		}
	}
	for flag, path := range map[string]string{"-a": keys, "-f": conf} {
		if path == "" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			logCall(c)
			return fail("tmate: %v", err)
		}
		if c.Files == nil {
			c.Files = map[string]string{}
		}
		c.Files[flag] = string(b)
	}
	logCall(c)
	if socket == "" {
		// The gate always names its socket; a call without -S would talk to
		// the user's own tmate.
		return fail("tmate double: -S is required")
	}
	if i >= len(args) {
		return fail("tmate double: a command is required")
	}
	cmd, rest := args[i], args[i+1:]
	if os.Getenv("TMATE_DOUBLE_HANG") == cmd {
		for {
			time.Sleep(time.Hour)
		}
	}
	if os.Getenv("TMATE_DOUBLE_FAIL") == cmd {
		return fail("tmate: %s failed (injected by TMATE_DOUBLE_FAIL)", cmd)
	}
	s := sessionFiles{socket: socket}
	switch cmd {
	case "new-session", "new":
		return s.newSession(rest, conf, keys)
	case "wait", "wait-for":
		if len(rest) != 1 || rest[0] != "tmate-ready" {
			return fail("usage: wait-for [-L|-S|-U] channel")
		}
		return s.waitReady()
	case "display", "display-message":
		if len(rest) != 2 || rest[0] != "-p" {
			return fail("tmate double: only display -p FORMAT is implemented")
		}
		return s.display(rest[1])
	case "has-session", "has":
		if code := s.requireSession(); code != 0 {
			return code
		}
		return 0
	case "kill-session":
		if code := s.requireSession(); code != 0 {
			return code
		}
		for _, f := range []string{s.socket, s.file("ready"), s.file("clients"), s.file("ended"), s.file("conf")} {
			os.Remove(f)
		}
		return 0
	}
	return fail("unknown command: %s", cmd)
}

func logCall(c call) {
	path := os.Getenv("TMATE_DOUBLE_LOG")
	if path == "" {
		return
	}
	b, _ := json.Marshal(c)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tmate double: %v\n", err)
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

type sessionFiles struct{ socket string }

func (s sessionFiles) file(name string) string { return s.socket + "." + name }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// requireServer fails like tmux when nothing listens on the socket.
func (s sessionFiles) requireServer() int {
	if !exists(s.socket) {
		return fail("no server running on %s", s.socket)
	}
	return 0
}

func (s sessionFiles) requireSession() int {
	if code := s.requireServer(); code != 0 {
		return code
	}
	if exists(s.file("ended")) {
		return fail("can't find session: 0")
	}
	return 0
}

var knownOptions = map[string]bool{
	"tmate-server-host":                true,
	"tmate-server-port":                true,
	"tmate-server-rsa-fingerprint":     true,
	"tmate-server-ed25519-fingerprint": true,
}

// readConf checks a config file the way tmux would reject it: every
// non-comment line must be `set -g OPTION VALUE` with a known option.
func readConf(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opts := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 || (fields[0] != "set" && fields[0] != "set-option") || fields[1] != "-g" {
			return nil, fmt.Errorf("%s:%d: usage: set-option [-g] option value", path, n)
		}
		if !knownOptions[fields[2]] {
			return nil, fmt.Errorf("%s:%d: unknown option: %s", path, n, fields[2])
		}
		opts[fields[2]] = strings.Trim(fields[3], `"`)
	}
	return opts, sc.Err()
}

func validKeys(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "ssh-") && !strings.HasPrefix(line, "ecdsa-") && !strings.HasPrefix(line, "sk-") {
			return fmt.Errorf("%s: not an authorized_keys line: %q", path, line)
		}
		n++
	}
	if n == 0 {
		return errors.New(path + ": no keys")
	}
	return nil
}

func (s sessionFiles) newSession(rest []string, conf, keys string) int {
	if len(rest) != 1 || rest[0] != "-d" {
		// Without -d tmux attaches to the terminal, which a CI step has not.
		return fail("open terminal failed: not a terminal")
	}
	if exists(s.socket) && !exists(s.file("ended")) {
		return fail("duplicate session: 0")
	}
	if keys != "" {
		if err := validKeys(keys); err != nil {
			return fail("tmate: invalid authorized keys file: %v", err)
		}
	}
	server := map[string]string{}
	if conf != "" {
		var err error
		if server, err = readConf(conf); err != nil {
			return fail("%v", err)
		}
	}
	b, _ := json.Marshal(server)
	clients := os.Getenv("TMATE_DOUBLE_CLIENTS")
	if clients == "" {
		clients = "0"
	}
	for name, content := range map[string]string{"conf": string(b), "clients": clients} {
		if err := os.WriteFile(s.file(name), []byte(content), 0o600); err != nil {
			return fail("tmate: %v", err)
		}
	}
	os.Remove(s.file("ended"))
	if err := os.WriteFile(s.socket, nil, 0o600); err != nil {
		return fail("error creating %s (%v)", s.socket, err)
	}
	if os.Getenv("TMATE_DOUBLE_READY") != "never" {
		if err := os.WriteFile(s.file("ready"), []byte("ready"), 0o600); err != nil {
			return fail("tmate: %v", err)
		}
	}
	return 0
}

func (s sessionFiles) waitReady() int {
	for {
		if !exists(s.socket) {
			return fail("server exited unexpectedly")
		}
		if exists(s.file("ready")) {
			return 0
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s sessionFiles) token() string {
	h := fnv.New64a()
	h.Write([]byte(s.socket))
	return fmt.Sprintf("D%016xtmatedbl", h.Sum64())
}

func (s sessionFiles) display(format string) int {
	if code := s.requireSession(); code != 0 {
		return code
	}
	server := map[string]string{}
	if b, err := os.ReadFile(s.file("conf")); err == nil {
		json.Unmarshal(b, &server)
	}
	host := server["tmate-server-host"]
	if host == "" {
		host = "nyc1.tmate.double"
	}
	port := ""
	if p := server["tmate-server-port"]; p != "" && p != "22" {
		port = "-p" + p + " "
	}
	ready := exists(s.file("ready"))
	clients, _ := os.ReadFile(s.file("clients"))
	values := map[string]string{
		"tmate_num_clients": strings.TrimSpace(string(clients)),
	}
	if ready {
		values["tmate_ssh"] = "ssh " + port + s.token() + "@" + host
		values["tmate_ssh_ro"] = "ssh " + port + "ro-" + s.token() + "@" + host
		values["tmate_web"] = "https://" + host + "/t/" + s.token()
		values["tmate_web_ro"] = "https://" + host + "/t/ro-" + s.token()
	}
	var out strings.Builder
	for {
		start := strings.Index(format, "#{")
		if start < 0 {
			out.WriteString(format)
			break
		}
		end := strings.Index(format[start:], "}")
		if end < 0 {
			out.WriteString(format)
			break
		}
		out.WriteString(format[:start])
		out.WriteString(values[format[start+2:start+end]])
		format = format[start+end+1:]
	}
	fmt.Println(out.String())
	return 0
}
