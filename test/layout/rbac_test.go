package layout

import (
	"errors"
	"go/ast"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/ontime-dev/ontime/api/v1alpha1"
	"github.com/ontime-dev/ontime/test/framework"
)

// rbacRule is one verb on one resource (resource/subresource) of a group.
type rbacRule struct{ group, resource, verb string }

func (r rbacRule) String() string {
	return r.verb + " " + r.group + "/" + r.resource
}

// controllerCommand is the package whose import graph is the controller:
// what the CLI's commands call runs with the user's rights, not the
// controller's, and does not count.
const controllerCommand = "github.com/ontime-dev/ontime/cmd/ontime/app/controllercmd"

// clientVerbs are controller-runtime client methods and the verb each
// asks the API server for.
var clientVerbs = map[string]string{"Get": "get", "List": "list", "Create": "create", "Update": "update", "Patch": "patch", "Delete": "delete", "DeleteAllOf": "deletecollection"}

// readVerbs are one: a read through the manager's client is served by an
// informer (list and watch), a live read by get or list.
var readVerbs = []string{"get", "list", "watch"}

// libraryUse is a rule a library exercises on the controller's behalf,
// and the declaration whose use in the controller's code makes it do so.
type libraryUse struct {
	rules     []rbacRule
	pkg, name string
}

var libraryUses = []libraryUse{
	{rules: []rbacRule{{"", "events", "create"}, {"", "events", "patch"}}, pkg: "k8s.io/client-go/tools/record", name: "EventRecorder"},
	{rules: []rbacRule{{"authentication.k8s.io", "tokenreviews", "create"}, {"authorization.k8s.io", "subjectaccessreviews", "create"}},
		pkg: "sigs.k8s.io/controller-runtime/pkg/metrics/filters", name: "WithAuthenticationAndAuthorization"},
	// client-go's Lease lock gets, creates and updates the Lease.
	{rules: []rbacRule{{"coordination.k8s.io", "leases", "get"}, {"coordination.k8s.io", "leases", "create"}, {"coordination.k8s.io", "leases", "update"}},
		pkg: "sigs.k8s.io/controller-runtime/pkg/manager", name: "LeaderElection"},
	// cert-controller watches its Secret and the webhook configurations,
	// and writes the certificate and the CA bundle into them.
	{rules: append(append(readRules("", "secrets"), readRules("admissionregistration.k8s.io", "validatingwebhookconfigurations")...),
		append(readRules("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
			rbacRule{"", "secrets", "update"},
			rbacRule{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "update"}, rbacRule{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "patch"},
			rbacRule{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "update"}, rbacRule{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "patch"})...),
		pkg: "github.com/open-policy-agent/cert-controller/pkg/rotator", name: "AddRotator"},
}

// dynamicUse is a rule used through objects whose kind is decided at run
// time (unstructured, whose kind the code sets, or an interface such as
// client.Object): the package must make the call, with verb
// ("create", or "update status" for the status subresource), on such an
// object.
type dynamicUse struct {
	rules     []rbacRule
	pkg, call string
}

var dynamicUses = []dynamicUse{
	{[]rbacRule{{"autoscaling.x-k8s.io", "capacitybuffers", "list"}}, "github.com/ontime-dev/ontime/internal/controller/warmupobjects", "list"},
	{[]rbacRule{{"autoscaling.x-k8s.io", "capacitybuffers", "create"}}, "github.com/ontime-dev/ontime/internal/controller/warmupobjects", "create"},
	{[]rbacRule{{"autoscaling.x-k8s.io", "capacitybuffers", "delete"}}, "github.com/ontime-dev/ontime/internal/controller/warmupobjects", "delete"},
	// The one conditional status writer of the leader, the standby,
	// backfill and both group kinds, through client.Object.
	{[]rbacRule{{"ontime.dev", "scheduledjobs/status", "patch"}, {"ontime.dev", "backfills/status", "patch"},
		{"ontime.dev", "concurrencygroups/status", "patch"}, {"ontime.dev", "clusterconcurrencygroups/status", "patch"}},
		"github.com/ontime-dev/ontime/internal/controller/statuswrite", "patch status"},
}

func readRules(group, resource string) []rbacRule {
	var rules []rbacRule
	for _, verb := range readVerbs {
		rules = append(rules, rbacRule{group, resource, verb})
	}
	return rules
}

// TestControllerRBACIsUsed: every verb of the controller's ClusterRole and
// Role (config/rbac/role.yaml, generated from the +kubebuilder:rbac
// markers) is used by the controller's code: a controller-runtime client
// call on an object of that kind (a read by get, list or an informer
// counts for all three read verbs), a call on an object of a kind
// decided at run time listed in dynamicUses, or a library listed in
// libraryUses that the code calls.
// A marker that grants more than the code does fails here, and so does a
// write the code makes that the role does not grant.
func TestControllerRBACIsUsed(t *testing.T) {
	granted := grantedRules(t)
	code := readControllerCode(t)
	used := usedRules(t, code)
	for _, rule := range sortedRules(granted) {
		if _, ok := used[rule]; !ok {
			t.Errorf("config/rbac/role.yaml grants %s, which no code path of the controller uses: drop it from its +kubebuilder:rbac marker (or name the library or the call on a kind decided at run time that needs it here)", rule)
		}
	}
	for _, rule := range sortedRules(used) {
		if !isRead(rule.verb) && !granted[rule] {
			t.Errorf("%s: the controller's code makes %s, which config/rbac/role.yaml does not grant", used[rule], rule)
		}
	}
	for rule, where := range code.typed {
		if isRead(rule.verb) && !granted[rbacRule{rule.group, rule.resource, "list"}] && !granted[rbacRule{rule.group, rule.resource, "get"}] {
			t.Errorf("%s: the controller reads %s/%s, which config/rbac/role.yaml does not let it read", where, rule.group, rule.resource)
		}
	}
	t.Logf("%d rules granted; %d typed client uses in the controller's code", len(granted), len(code.typed))
}

// usedRules are the rules the code uses, each with where: its typed
// calls, the libraries it calls (libraryUses) and its calls on kinds
// decided at run time (dynamicUses). An entry of either list whose call
// is gone fails: the verbs only it needed are to go too.
func usedRules(t *testing.T, code controllerCode) map[rbacRule]string {
	t.Helper()
	used := map[rbacRule]string{}
	for rule, where := range code.typed {
		used[rule] = where
	}
	for _, use := range libraryUses {
		where, ok := code.references[use.pkg+"."+use.name]
		if !ok {
			t.Errorf("libraryUses: the controller's code no longer uses %s.%s: drop the entry and the verbs only it needed (%v)", use.pkg, use.name, use.rules)
			continue
		}
		for _, rule := range use.rules {
			used[rule] = where + " (" + use.pkg + "." + use.name + ")"
		}
	}
	for _, use := range dynamicUses {
		where, ok := code.dynamic[use.pkg+" "+use.call]
		if !ok {
			t.Errorf("dynamicUses: %s no longer makes the call %q on an object of a kind decided at run time: drop the entry and the verbs only it needed (%v)", use.pkg, use.call, use.rules)
			continue
		}
		for _, rule := range use.rules {
			used[rule] = where + " (a kind decided at run time)"
		}
	}
	return used
}

func isRead(verb string) bool { return verb == "get" || verb == "list" || verb == "watch" }

func sortedRules[V any](rules map[rbacRule]V) []rbacRule {
	sorted := make([]rbacRule, 0, len(rules))
	for rule := range rules {
		sorted = append(sorted, rule)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	return sorted
}

// grantedRules reads the controller's ClusterRole and Role.
func grantedRules(t *testing.T) map[rbacRule]bool {
	t.Helper()
	file, err := os.Open(filepath.Join(framework.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = file.Close() }()
	granted := map[rbacRule]bool{}
	decoder := utilyaml.NewYAMLOrJSONDecoder(file, 4096)
	for {
		var role rbacv1.ClusterRole // a Role has the same rules
		if err := decoder.Decode(&role); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		for _, rule := range role.Rules {
			for _, group := range rule.APIGroups {
				for _, resource := range rule.Resources {
					for _, verb := range rule.Verbs {
						granted[rbacRule{group, resource, verb}] = true
					}
				}
			}
		}
	}
	if len(granted) == 0 {
		t.Fatal("config/rbac/role.yaml grants nothing")
	}
	return granted
}

// controllerCode is what the controller's packages ask of the API server.
type controllerCode struct {
	// typed are the rules of client calls on objects of a known kind.
	typed map[rbacRule]string
	// dynamic are "package call" ("create", "update status") of client
	// calls on objects whose kind is decided at run time.
	dynamic map[string]string
	// references are "package.Name" of declarations of other modules the
	// code uses.
	references map[string]string
}

// readControllerCode type-checks every package of this module in the
// controller command's import graph and reads its client calls.
func readControllerCode(t *testing.T) controllerCode {
	t.Helper()
	config := &packages.Config{Dir: framework.RepoRoot(), Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps}
	graph, err := packages.Load(config, controllerCommand)
	if err != nil || packages.PrintErrors(graph) > 0 {
		t.Fatalf("loading %s: %v", controllerCommand, err)
	}
	var own []string
	packages.Visit(graph, nil, func(p *packages.Package) {
		if strings.HasPrefix(p.PkgPath, "github.com/ontime-dev/ontime/") {
			own = append(own, p.PkgPath)
		}
	})
	config.Mode = packages.NeedName | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedFiles
	loaded, err := packages.Load(config, own...)
	if err != nil || packages.PrintErrors(loaded) > 0 {
		t.Fatalf("type-checking the controller's packages: %v", err)
	}
	kinds := knownKinds()
	code := controllerCode{typed: map[rbacRule]string{}, dynamic: map[string]string{}, references: map[string]string{}}
	for _, p := range loaded {
		for _, file := range p.Syntax {
			ast.Inspect(file, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					code.readCall(p, n, kinds)
				case *ast.Ident:
					if object := p.TypesInfo.Uses[n]; object != nil && object.Pkg() != nil && !strings.HasPrefix(object.Pkg().Path(), "github.com/ontime-dev/ontime") {
						code.references[object.Pkg().Path()+"."+object.Name()] = p.Fset.Position(n.Pos()).String()
					}
				}
				return true
			})
		}
	}
	return code
}

// readCall records a controller-runtime client call (Get, List, Create,
// Update, Patch, Delete, on the object or its status) or a watch (a
// controller builder's For, Owns or Watches, source.Kind, an informer).
func (c controllerCode) readCall(p *packages.Package, call *ast.CallExpr, kinds map[string]schema.GroupVersionKind) {
	selector, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	function, ok := p.TypesInfo.Uses[selector.Sel].(*types.Func)
	if !ok || function.Pkg() == nil {
		return
	}
	verbs, object := requestOf(function, call)
	if object == nil {
		return
	}
	where := p.Fset.Position(call.Pos()).String()
	status := statusWriter(selector.X)
	gvk, known := kinds[objectTypeName(p.TypesInfo.TypeOf(object))]
	if !known {
		// unstructured, or an interface: the kind is decided at run time.
		for _, verb := range verbs {
			if status {
				verb += " status"
			}
			c.dynamic[p.PkgPath+" "+verb] = where
		}
		return
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	resource := plural.Resource
	if status {
		resource += "/status"
	}
	for _, verb := range verbs {
		c.typed[rbacRule{gvk.Group, resource, verb}] = where
	}
}

// requestOf is what a call of function asks of the API server: its verbs
// and the argument whose type says the kind; no object if nothing.
func requestOf(function *types.Func, call *ast.CallExpr) (verbs []string, object ast.Expr) {
	name := function.Name()
	switch function.Pkg().Path() {
	case "sigs.k8s.io/controller-runtime/pkg/client":
		return clientRequest(name, call.Args)
	case "sigs.k8s.io/controller-runtime/pkg/builder":
		if (name == "For" || name == "Owns" || name == "Watches") && controllerBuilder(function) {
			return readVerbs, call.Args[0]
		}
	case "sigs.k8s.io/controller-runtime/pkg/source":
		if name == "Kind" && len(call.Args) >= 2 {
			return readVerbs, call.Args[1]
		}
	case "sigs.k8s.io/controller-runtime/pkg/cache":
		if name == "GetInformer" && len(call.Args) >= 2 {
			return readVerbs, call.Args[1]
		}
	}
	return nil, nil
}

// clientRequest is what a client method asks for: Get(ctx, key, obj),
// List(ctx, list), the writes (ctx, obj); a read counts for all the read
// verbs.
func clientRequest(name string, args []ast.Expr) (verbs []string, object ast.Expr) {
	verb := clientVerbs[name]
	switch {
	case verb == "" || len(args) < 2:
		return nil, nil
	case verb == "get":
		if len(args) < 3 {
			return nil, nil
		}
		return readVerbs, args[2]
	case verb == "list":
		return readVerbs, args[1]
	default:
		return []string{verb}, args[1]
	}
}

// controllerBuilder: function is a method of a controller's builder, not
// of a webhook's (whose For registers a webhook and reads nothing).
func controllerBuilder(function *types.Func) bool {
	name := receiverName(function)
	return name != "" && !strings.Contains(name, "Webhook")
}

// receiverName is the name of a method's receiver type.
func receiverName(function *types.Func) string {
	recv := function.Type().(*types.Signature).Recv()
	if recv == nil {
		return ""
	}
	t := recv.Type()
	if pointer, ok := t.(*types.Pointer); ok {
		t = pointer.Elem()
	}
	if named, ok := t.(*types.Named); ok {
		return named.Obj().Name()
	}
	return ""
}

// statusWriter: the call is on c.Status() or c.SubResource("status").
func statusWriter(receiver ast.Expr) bool {
	call, ok := receiver.(*ast.CallExpr)
	if !ok {
		return false
	}
	selector, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if selector.Sel.Name == "Status" {
		return true
	}
	if selector.Sel.Name == "SubResource" && len(call.Args) == 1 {
		if literal, ok := call.Args[0].(*ast.BasicLit); ok && literal.Value == `"status"` {
			return true
		}
	}
	return false
}

// objectTypeName is "package.Name" of the named type an object argument
// points to, or "" for an interface or anything else.
func objectTypeName(t types.Type) string {
	if pointer, ok := t.(*types.Pointer); ok {
		t = pointer.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return ""
	}
	if _, isInterface := named.Underlying().(*types.Interface); isInterface {
		return ""
	}
	return named.Obj().Pkg().Path() + "." + named.Obj().Name()
}

// knownKinds maps "package.Name" of each Go type of client-go's scheme
// and ontime's to its kind (a list type to its items').
func knownKinds() map[string]schema.GroupVersionKind {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	kinds := map[string]schema.GroupVersionKind{}
	for gvk, goType := range scheme.AllKnownTypes() {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		kinds[goTypeName(goType)] = gvk
	}
	return kinds
}

func goTypeName(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }
