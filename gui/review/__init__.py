"""Review images: a tab's review drawn as PNG, SVG, CSV or Markdown, and exported."""
