package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SampleFiles are the files of config/samples/base and
// config/samples/extended:
// what make dev applies and docs/ shows, the cases of the samples'
// admission test and the seeds of the fuzz targets.
func SampleFiles(tb testing.TB) []string {
	tb.Helper()
	var files []string
	for _, dir := range []string{filepath.Join("samples", "base"), filepath.Join("samples", "extended")} {
		matches, err := filepath.Glob(filepath.Join(RepoRoot(), "config", dir, "*.yaml"))
		if err != nil || len(matches) == 0 {
			tb.Fatalf("config/%s: %v (%d files)", dir, err, len(matches))
		}
		files = append(files, matches...)
	}
	return files
}

// Sample is one YAML document of the samples.
type Sample struct {
	// File is the document's file name.
	File string
	Doc  string
}

// SampleDocuments are the YAML documents of the samples, in file order.
func SampleDocuments(tb testing.TB) []Sample {
	tb.Helper()
	var samples []Sample
	for _, file := range SampleFiles(tb) {
		content, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		for _, doc := range strings.Split(string(content), "\n---\n") {
			samples = append(samples, Sample{File: filepath.Base(file), Doc: doc})
		}
	}
	return samples
}
