// Package cli is what ontime's commands share: the error a user caused
// (exit code 2) and kubectl's flags for reaching a cluster.
package cli

import (
	"fmt"
)

// InputError marks errors the user caused; they exit with code 2.
type InputError struct{ err error }

func (e InputError) Error() string { return e.err.Error() }
func (e InputError) Unwrap() error { return e.err }

// Input marks err as one the user caused.
func Input(err error) error { return InputError{err} }

// BadInput is an InputError that says what was wrong, naming the flag or
// argument and its value.
func BadInput(format string, args ...any) error {
	return InputError{fmt.Errorf(format, args...)}
}
