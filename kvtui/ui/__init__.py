"""The Textual TUI. The only package that imports Textual; `kvtui.ui.app.run_app` opens it."""
