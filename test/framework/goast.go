package framework

import "go/ast"

// FuncName is a declared function's name, or a method's Type.Method: the
// receiver's type without * or type parameters. The tests that read the
// code (test/layout, test/runpath) name functions this way, as
// docs/architecture.md does.
func FuncName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	if recv := receiverType(fn.Recv.List[0].Type); recv != "" {
		return recv + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// receiverType is a method receiver's type name, without * or type
// parameters.
func receiverType(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.IndexExpr:
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}
