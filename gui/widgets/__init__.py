"""Small widgets and looks every part uses: elided text, file dialogs, the palette."""
