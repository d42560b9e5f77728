// Command hitch runs the Hitch service and its operator commands:
//
//	hitch help                       list the commands (also hitch -h)
//	hitch [serve]                    run the API (the default)
//	hitch migrate                    apply database migrations and exit
//	hitch backup --to FILE           copy the SQLite database while Hitch runs
//	hitch clients create --name N    create a developer account (tenant)
//	hitch clients list               list developer accounts
//	hitch clients rotate-secret --client-id ID
//	hitch connectors create --name N create a merchant connector's credentials
//	hitch connectors list            list merchant connectors
//	hitch connectors revoke --id ID  revoke a connector
//	hitch keys rotate                make a new JWE key the current one
//	hitch keys list                  list JWE keys
//	hitch members add --client-id ID --email E --role R
//	                                 add a dashboard member (password shown once)
//	hitch audit verify [--client-id ID]
//	                                 check the audit log's hash chains
//
// Every command takes the same configuration flags and HITCH_* variables.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hitchdev/hitch/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal stops the process at once
	}()
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand: its own flags are added to the configuration
// flag set, and it runs with the parsed Config.
type command struct {
	name  string
	usage string
	flags func(fs *flag.FlagSet) func(ctx context.Context, cfg *config.Config, out io.Writer, errOut io.Writer) error
}

var commands = []command{
	{"serve", "run the API, workers and web UI (default)", serveFlags},
	{"worker", "run only the job workers (webhook delivery), for scaling out", workerFlags},
	{"migrate", "apply database migrations and exit", migrateFlags},
	{"backup", "copy the SQLite database, while Hitch runs, to a new file: --to FILE", backupFlags},
	{"clients create", "create a developer account: --name NAME [--env E] [--json]", clientsCreateFlags},
	{"clients list", "list developer accounts [--json]", clientsListFlags},
	{"clients rotate-secret", "issue a new secret: --client-id ID [--grace 24h] [--json]", clientsRotateFlags},
	{"webhooks add", "register an endpoint: --client-id ID --url URL [--events E1,E2] [--json]", webhooksAddFlags},
	{"webhooks list", "list a client's endpoints: --client-id ID [--json]", webhooksListFlags},
	{"webhooks update", "change an endpoint's URL or event filter: --client-id ID --id ENDPOINT [--url URL] [--events E1,E2|all] [--json]", webhooksUpdateFlags},
	{"webhooks remove", "remove an endpoint: --client-id ID --id ENDPOINT", webhooksRemoveFlags},
	{"webhooks rotate-secret", "give an endpoint a new secret: --client-id ID --id ENDPOINT [--json]", webhooksRotateFlags},
	{"connectors create", "create a merchant connector's ingestion credentials: --name NAME [--json]", connectorsCreateFlags},
	{"connectors list", "list merchant connectors [--json]", connectorsListFlags},
	{"connectors revoke", "revoke a connector's credentials: --id ID", connectorsRevokeFlags},
	{"keys rotate", "make a new JWE key the current one; the others decrypt for --grace [--bits N] [--json]", keysRotateFlags},
	{"keys list", "list JWE keys [--json]", keysListFlags},
	{"members add", "add a dashboard member, printing its password once: --client-id ID --email E --role admin|developer|viewer [--name N] [--json]", membersAddFlags},
	{"audit verify", "check the audit log's hash chains: [--client-id ID]; exits 1 naming the first broken record", auditVerifyFlags},
	{"try-production", "run the production path on one machine: the reference shop, hitch in production and the reference connector [--dir D]", tryProductionFlags},
	{"refconnector", "run the reference connector (examples/refconnector); credentials in CONNECTOR_ID and CONNECTOR_SECRET: --hitch-url U --site U [--contexts N]", refconnectorFlags},
	{"refshop", "run the reference merchant website for connectors and end-to-end tests: --addr A [--admin-token T]", refshopFlags},
}

// run parses args and runs one command, returning the exit code.
func run(ctx context.Context, args, environ []string, out, errOut io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		// hitch help COMMAND is hitch COMMAND -h.
		if len(args) == 1 {
			usage(out)
			return 0
		}
		args = append(args[1:len(args):len(args)], "-h")
	}
	cmd, rest, ok := findCommand(args)
	if !ok {
		fmt.Fprintf(errOut, "hitch: unknown command %q\n\n", strings.Join(leadingWords(args), " "))
		usage(errOut)
		return 2
	}
	getenv := lookupIn(environ)
	fs := config.NewFlagSet("hitch "+cmd.name, getenv)
	runCmd := cmd.flags(fs.Flags())
	cfg, err := fs.Parse(rest, environ)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(out, "usage: hitch %s [flags]: %s\n\nflags:\n", cmd.name, cmd.usage)
		fs.Usage(out)
		return 0
	}
	if err != nil {
		fmt.Fprintf(errOut, "hitch: %v\n", err)
		return 2
	}
	if err := runCmd(ctx, cfg, out, errOut); err != nil {
		fmt.Fprintf(errOut, "hitch: %v\n", err)
		return 1
	}
	return 0
}

// findCommand matches the leading words of args (up to the first flag)
// against the commands; no words means serve.
func findCommand(args []string) (command, []string, bool) {
	words := leadingWords(args)
	if len(words) == 0 {
		return commands[0], args, true
	}
	for _, c := range commands {
		if strings.Join(words, " ") == c.name {
			return c, args[len(words):], true
		}
	}
	return command{}, nil, false
}

// isHelp reports whether a first argument asks for the list of commands.
func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

func leadingWords(args []string) []string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || len(words) == 2 {
			break
		}
		words = append(words, a)
	}
	return words
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: hitch <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-23s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(w, "\nRun 'hitch <command> -h' or 'hitch help <command>' for its flags; every command takes the configuration flags.")
}

func lookupIn(environ []string) func(string) string {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return func(k string) string { return env[k] }
}
