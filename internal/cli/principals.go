package cli

import (
	"encoding/hex"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/principal"
)

// principalsCmd lists the configured principals or prints a new key for
// the config. It reads the config, not the daemon; keys minted through
// the API (POST /api/principals/{name}/keys) live in the daemon's store.
func (e *env) principalsCmd() *cobra.Command {
	list := &cobra.Command{
		Use:     "list",
		Short:   "list the principals of the config: name, rights and where the key comes from (never the key)",
		Example: "  agentd principals list",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := e.loadConfig(false)
			if err != nil {
				return err
			}
			return listPrincipals(e, cfg)
		},
	}
	cmd := &cobra.Command{
		Use:   "principals [COMMAND]",
		Short: "who may call the daemon: list (the default), new-key",
		Example: `  agentd principals
  agentd principals new-key`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownSubcommand(cmd, args[0])
			}
			return list.RunE(cmd, args)
		},
	}
	cmd.AddCommand(list, &cobra.Command{
		Use:     "new-key",
		Short:   "print a random key and its SHA-256, for a [[principals]] entry",
		Example: "  agentd principals new-key",
		Args:    exactArgs(0, "no arguments"),
		RunE:    func(cmd *cobra.Command, args []string) error { return newKey(e) },
	})
	return cmd
}

// listPrincipals prints who may call the daemon and with what rights:
// never a key, only where it comes from.
func listPrincipals(e *env, cfg *config.Config) error {
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADMIN\tAGENTS\tTOOLS\tKEY")
	rows := 0
	switch {
	case cfg.APIKey != "":
		fmt.Fprintln(tw, config.AdminPrincipal+"\tyes\t*\t*\tapi_key (in the config file)")
		rows++
	case cfg.APIKeyEnv != "":
		fmt.Fprintf(tw, "%s\tyes\t*\t*\tapi_key_env %s\n", config.AdminPrincipal, cfg.APIKeyEnv)
		rows++
	}
	for _, p := range cfg.Principals {
		admin, agents, tools := "no", strings.Join(p.Agents, ","), strings.Join(p.Tools, ",")
		if p.Admin {
			admin = "yes"
			agents, tools = orAll(agents), orAll(tools)
		}
		key := "key_env " + p.KeyEnv
		if p.KeySHA256 != "" {
			key = "key_sha256 " + p.KeySHA256[:min(12, len(p.KeySHA256))] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, admin, dash(agents), dash(tools), key)
		rows++
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rows == 0 {
		fmt.Fprintf(e.stdout, "\nNo keys: the daemon has no authentication and listens on loopback only (principal %q).\nAdd [[principals]] or api_key_env to %s.\n", "local", cfg.File)
	}
	return nil
}

func orAll(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// newKey prints a random key and its SHA-256, for key_env or key_sha256.
func newKey(e *env) error {
	key, sum, err := principal.NewKey()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "key:        %s\nkey_sha256: %s\n\nGive the key to the principal (it is shown once); put one of these in its [[principals]] entry:\n  key_sha256 = %q\n  key_env = \"AGENTD_KEY_NAME\"   # with the key in that environment variable\n", key, hex.EncodeToString(sum[:]), hex.EncodeToString(sum[:]))
	return nil
}
