package main

// Output paths: atomic writes, the cleanup of temporary files a killed run
// left, and the checks that find an unwritable output before any work.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// writeFileAtomic writes data to path so that readers see the old file or
// the whole new one, never a part: a temporary file in the same directory
// (".NAME.tmp-PID-N": cleanStaleTemps knows it by its owner's PID), fsync,
// rename over path, then fsync of the directory.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, fmt.Sprintf(".%s.tmp-%d-*", filepath.Base(path), os.Getpid()))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // best effort: the rename is durable once the directory is
		d.Close()
	}
	return nil
}

// tempName matches the temporary files of writeFileAtomic: the target's
// base name, then the writer's PID and CreateTemp's number; or, from
// fgcheck before the PID was part of the name, the number alone.
var tempName = regexp.MustCompile(`^\.(.+)\.tmp-(?:(\d+)-)?\d+$`)

// cleanStaleTemps removes from dir the temporary files of writeFileAtomic
// (for target base name base, or any when base is "") that a killed
// fgcheck left: those of a process that no longer runs, and those without
// a PID older than a minute. It returns how many it removed.
func cleanStaleTemps(dir, base string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		m := tempName.FindStringSubmatch(e.Name())
		if m == nil || base != "" && m[1] != base || !e.Type().IsRegular() {
			continue
		}
		stale := false
		if m[2] != "" {
			pid, err := strconv.Atoi(m[2])
			stale = err == nil && pid != os.Getpid() && !alive(pid)
		} else if info, err := e.Info(); err == nil {
			stale = time.Since(info.ModTime()) > time.Minute
		}
		if stale && os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// checkOutDir reports, before any work, why files could not be written in
// directory dir (created later, when the first file is written): it is not
// a directory, or it or the nearest existing directory above it is not
// writable.
func checkOutDir(flag, dir string) error {
	if dir == "" {
		return fmt.Errorf("%s: empty directory name", flag)
	}
	at := dir
	for {
		st, err := os.Stat(at)
		if err == nil {
			if !st.IsDir() {
				if at == dir {
					return fmt.Errorf("%s %s: not a directory", flag, dir)
				}
				return fmt.Errorf("%s %s: %s is not a directory", flag, dir, at)
			}
			if err := probe(at); err != nil {
				return fmt.Errorf("%s %s: cannot write in %s: %v", flag, dir, at, reason(err))
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%s %s: %v", flag, dir, err)
		}
		up := filepath.Dir(at)
		if up == at {
			return fmt.Errorf("%s %s: no existing directory above it", flag, dir)
		}
		at = up
	}
}

// checkOutFile reports, before any work, why file path could not be
// written atomically: an empty name, a directory there, or a directory to
// hold it that is missing or not writable.
func checkOutFile(flag, path string) error {
	if path == "" {
		return fmt.Errorf("%s: empty file name", flag)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: is a directory (want a file name)", flag, path)
	} else if err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s %s: directory %s does not exist", flag, path, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %v", flag, path, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
	}
	if err := probe(dir); err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %v", flag, path, dir, reason(err))
	}
	return nil
}

// reason is the cause of a file error without the path it names.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// probe creates and removes a temporary file in dir.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, fmt.Sprintf(".fgcheck-probe.tmp-%d-*", os.Getpid()))
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
