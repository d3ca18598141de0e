package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/agentd/agentd/internal/manifest"
)

// LoadOptions says where the configuration is. The zero value loads
// $AGENTD_HOME/config.toml (or ~/.agentd/config.toml) and the real
// environment.
type LoadOptions struct {
	// Path is the file given with --config; "" means Home/config.toml.
	Path string
	// Home is AGENTD_HOME; "" means $AGENTD_HOME, else ~/.agentd.
	Home string
	// LookupEnv reads the environment; nil means os.LookupEnv. The Config
	// keeps it to resolve secrets when they are needed.
	LookupEnv func(string) (string, bool)
	// WriteDefault writes the commented default config.toml (mode 0600,
	// directory 0700) when Path is "" and the file does not exist.
	// Without it a missing default file means "all defaults".
	WriteDefault bool
}

// Load reads, strictly decodes, completes with defaults and validates
// the configuration, plus one agent manifest per *.toml file of the
// agents directory. Problems are reported all at once as an ErrorList,
// each naming its file, line and field; a missing --config file or an
// unreadable file is an ordinary wrapped error.
func Load(opts LoadOptions) (*Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	home, err := resolveHome(opts.Home, lookup)
	if err != nil {
		return nil, err
	}
	// How the file was chosen, for Config.Origin.
	var how string
	switch v, _ := lookup("AGENTD_HOME"); {
	case opts.Path != "":
		how = "given with --config"
	case opts.Home != "":
		how = "in the agentd home given by the caller"
	case v != "":
		how = "AGENTD_HOME=" + v
	default:
		how = "AGENTD_HOME is not set, so ~/.agentd"
	}
	file := opts.Path
	if file == "" {
		file = filepath.Join(home, "config.toml")
	} else if file, err = filepath.Abs(file); err != nil {
		return nil, fmt.Errorf("locate config file: %w", err)
	}

	present := true
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && opts.Path == "":
		if opts.WriteDefault {
			if data, err = writeDefault(file); err != nil {
				return nil, err
			}
		} else {
			present = false
		}
	default:
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := load(home, file, present, data, lookup)
	if err != nil {
		return nil, err
	}
	cfg.origin = origin{path: file, how: how}
	return cfg, nil
}

func resolveHome(home string, lookup func(string) (string, bool)) (string, error) {
	if home == "" {
		if v, ok := lookup("AGENTD_HOME"); ok && v != "" {
			home = v
		}
	}
	if home == "" {
		dir, ok := lookup("HOME")
		if !ok || dir == "" {
			var err error
			if dir, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("locate agentd home (set AGENTD_HOME): %w", err)
			}
		}
		home = filepath.Join(dir, ".agentd")
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return "", fmt.Errorf("locate agentd home: %w", err)
	}
	return abs, nil
}

// writeDefault creates file with DefaultFile, private to the user: the
// file may later hold the literal api_key.
func writeDefault(file string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("create config directory: %w", err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another agentd started at the same moment and wrote it.
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		return data, nil
	}
	if err != nil {
		return nil, fmt.Errorf("write default config: %w", err)
	}
	data := DefaultFile()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(file)
		return nil, fmt.Errorf("write default config %s: %w", file, err)
	}
	return data, nil
}

// load is Load after the file has been read; present is false when there
// is no file and everything is default.
func load(home, file string, present bool, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	r := &report{}
	cfg := &Config{}
	src := &source{file: file}
	if present {
		src = decodeStrict(r, file, data, cfg)
		if len(r.list) > 0 {
			return nil, r.err()
		}
		cfg.File = file
	}
	cfg.Home = home
	cfg.lookupEnv = lookup
	providersFromFile := len(cfg.Providers) > 0
	cfg.ApplyDefaults()
	cfg.recordBaseURLs(src, providersFromFile)

	agents := make([]agentSource, len(cfg.Agents))
	for i := range cfg.Agents {
		agents[i] = agentSource{src: src, base: fieldPath{}.key("agents").index(i)}
	}
	more, moreSrc := loadAgentsDir(r, cfg.AgentsDir)
	if len(r.list) > 0 {
		return nil, r.err()
	}
	cfg.Agents = append(cfg.Agents, more...)
	agents = append(agents, moreSrc...)

	validateConfig(r, src, cfg, agents)
	if err := r.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// loadAgentsDir decodes every regular *.toml file of dir (sorted by
// name; hidden files skipped). A missing directory holds no agents.
func loadAgentsDir(r *report, dir string) ([]manifest.Manifest, []agentSource) {
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		r.list = append(r.list, &Error{File: dir, Msg: "cannot read the agents directory: " + ioReason(err)})
		return nil, nil
	}
	var ms []manifest.Manifest
	var srcs []agentSource
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".toml") {
			continue
		}
		file := filepath.Join(dir, name)
		// Stat follows symlinks; only regular files are read, so a FIFO
		// or device named *.toml cannot block or flood the start.
		if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			r.list = append(r.list, &Error{File: file, Msg: "cannot read: " + ioReason(err)})
			continue
		}
		before := len(r.list)
		var m manifest.Manifest
		src := decodeStrict(r, file, data, &m)
		if len(r.list) > before {
			continue
		}
		ms = append(ms, m)
		srcs = append(srcs, agentSource{src: src})
	}
	return ms, srcs
}

// ioReason is err without the path, which the Error already names.
func ioReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ParseManifestTOML decodes one agent manifest (the top-level keys of
// manifest.Manifest) as strictly as config.toml and checks it on its
// own; name is the file name used in errors. Whether its provider and
// mcp_servers exist is checked by Load, which knows them.
func ParseManifestTOML(name string, data []byte) (manifest.Manifest, error) {
	r := &report{}
	var m manifest.Manifest
	src := decodeStrict(r, name, data, &m)
	if len(r.list) == 0 {
		checkManifest(r, src, nil, &m, nil, nil)
	}
	if err := r.err(); err != nil {
		return manifest.Manifest{}, err
	}
	return m, nil
}

// decodeStrict parses data, reports unknown keys and mistyped values with
// their lines, and only then decodes into dst (a pointer to a struct).
// It returns the file's key positions for later validation.
func decodeStrict(r *report, file string, data []byte, dst any) *source {
	text := string(data)
	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err != nil {
		r.list = append(r.list, syntaxError(file, text, err))
		return &source{file: file}
	}
	src := &source{file: file, lines: locateKeys(text)}
	before := len(r.list)
	checkTree(r, src, raw, reflect.TypeOf(dst).Elem(), nil)
	if len(r.list) > before {
		return src
	}
	if _, err := toml.Decode(text, dst); err != nil {
		// checkTree accepts only what the decoder can store; reaching this
		// is a bug in checkTree, still reported with a position.
		e := &Error{File: file, Msg: "cannot decode: " + err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Line, e.Field, e.Msg = pe.Position.Line, pe.LastKey, pe.Message
		}
		r.list = append(r.list, e)
	}
	return src
}

// syntaxError turns a toml parse error into an Error. The parser quotes
// the text it choked on; on a line that names a key or token that text
// may be the secret, so the detail is dropped there.
func syntaxError(file, text string, err error) *Error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{File: file, Msg: "invalid TOML"}
	}
	msg := pe.Message
	if mayHoldSecret(pe.LastKey) || mayHoldSecret(lineText(text, pe.Position.Line)) {
		msg = "syntax error (details not shown: this line may hold a secret)"
	}
	return &Error{File: file, Line: pe.Position.Line, Msg: "invalid TOML: " + msg}
}

func lineText(text string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return ""
		}
		text = text[j+1:]
	}
	line, _, _ := strings.Cut(text, "\n")
	return line
}

func mayHoldSecret(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"key", "token", "secret", "password", "auth", "bearer"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// Reread loads the file c was loaded from again, with the same home and
// environment: the config of a reload (SIGHUP). A file that no longer
// loads returns the error naming file:line, as at start.
func (c *Config) Reread() (*Config, error) {
	return Load(LoadOptions{Path: c.File, Home: c.Home, LookupEnv: c.lookupEnv})
}
