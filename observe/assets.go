package observe

import (
	"embed"
	"io/fs"
	"net/http"
)

// assets are the dashboard's files: plain HTML, CSS and JavaScript
// modules, no build step (docs/dependencies.md says why).
//
//go:embed assets
var assets embed.FS

func assetHandler() http.Handler {
	sub, _ := fs.Sub(assets, "assets")
	return http.StripPrefix("/ui/", http.FileServerFS(sub))
}

func serveIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFileFS(w, r, assets, "assets/index.html")
}
