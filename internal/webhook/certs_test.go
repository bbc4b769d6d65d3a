package webhook

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ontime-dev/ontime/internal/scheme"
)

// TestCertFileWriter: the files appear as soon as the Secret holds them,
// and the writer reports the serving pair complete only then.
func TestCertFileWriter(t *testing.T) {
	key := types.NamespacedName{Namespace: "ontime-system", Name: "ontime-webhook-server-cert"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	reader := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(secret).Build()
	dir := filepath.Join(t.TempDir(), "serving-certs")
	w := &CertFileWriter{Reader: reader, Secret: key, Dir: dir}
	if complete, err := w.sync(context.Background()); err != nil || complete {
		t.Fatalf("an empty Secret: complete %v, %v; want incomplete", complete, err)
	}
	secret.Data = map[string][]byte{"tls.crt": []byte("cert"), "tls.key": []byte("key"), "ca.crt": []byte("ca")}
	if err := reader.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	if complete, err := w.sync(context.Background()); err != nil || !complete {
		t.Fatalf("a filled Secret: complete %v, %v; want complete", complete, err)
	}
	for name, want := range secret.Data {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != string(want) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}
