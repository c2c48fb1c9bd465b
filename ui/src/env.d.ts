declare const __PANEL_VERSION__: string;
