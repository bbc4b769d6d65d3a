package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SampleFiles are the files of config/samples: what make dev applies and
// docs/ shows, the cases of the samples' admission test and the seeds of
// the fuzz targets.
func SampleFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(RepoRoot(), "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("config/samples: %v (%d files)", err, len(files))
	}
	return files
}

// Sample is one YAML document of config/samples.
type Sample struct {
	// File is the document's file name.
	File string
	Doc  string
}

// SampleDocuments are the YAML documents of config/samples, in file order.
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
