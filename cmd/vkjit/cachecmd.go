package main

import (
	"fmt"
	"io"

	"github.com/vkjit/vkjit/cache"
	"github.com/vkjit/vkjit/internal/settings"
)

// cmdCache inspects the compile cache: `vkjit cache stats|clear|dir`.
func cmdCache(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("cache: want one of stats, clear, dir (usage: vkjit cache stats|clear|dir)")
	}
	dir, err := settings.CacheDir("")
	if err != nil {
		return err
	}
	limit, err := settings.CacheLimit(0)
	if err != nil {
		return err
	}
	c, err := cache.Open(dir, limit)
	if err != nil {
		return err
	}
	switch args[0] {
	case "dir":
		fmt.Fprintln(stdout, c.Dir())
	case "stats":
		st, err := c.Stats()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "dir      %s\nentries  %d\nbytes    %d\nlimit    %d\n", st.Dir, st.Entries, st.Bytes, st.Limit)
	case "clear":
		return c.Clear()
	default:
		return fmt.Errorf("cache: unknown subcommand %q (want stats, clear or dir)", args[0])
	}
	return nil
}
