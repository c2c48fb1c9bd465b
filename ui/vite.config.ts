// Builds the panel into ONE self-contained ES module, ui/dist/comfyui-assistant.js, which
// ComfyUI loads from WEB_DIRECTORY: React and every dependency inside, CSS injected at load,
// NODE_ENV defined, minified; the translations beside it as ui/dist/locales/<tag>.json. ComfyUI's
// own module "../../scripts/app.js" stays external: it is how an extension reaches the app object
// (the playground serves the same path).
// The playground (a LiteGraph canvas for trying the assistant without ComfyUI) builds
// separately with `vite build --mode playground` into ui/playground-dist, never into ui/dist:
// ComfyUI loads every .js file under WEB_DIRECTORY as an extension.
import { readFileSync } from "node:fs";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";
import { licenseNotices } from "./license-notices.ts";
import { TABLES } from "./src/i18n/locales/index.ts";

const APP_MODULE = "../../scripts/app.js";

/** Inline the bundle's CSS into the JS as one <style> tag added at load (no second file). */
function injectCss(id: string): Plugin {
  return {
    name: "comfyui-assistant-inject-css",
    apply: "build",
    enforce: "post",
    generateBundle(_options, bundle) {
      const css = Object.entries(bundle).filter(([name]) => name.endsWith(".css"));
      const js = Object.values(bundle).find((c) => c.type === "chunk" && c.isEntry);
      if (!js || js.type !== "chunk" || css.length === 0) return;
      const text = css.map(([, asset]) => (asset.type === "asset" ? String(asset.source) : "")).join("");
      js.code =
        `(()=>{if(typeof document<"u"&&!document.getElementById(${JSON.stringify(id)})){` +
        `const s=document.createElement("style");s.id=${JSON.stringify(id)};` +
        `s.textContent=${JSON.stringify(text)};document.head.appendChild(s)}})();\n` +
        js.code;
      for (const [name] of css) delete bundle[name];
    },
  };
}

/** Write each translation beside the module as locales/<tag>.json, fetched when its language is
 * chosen (src/i18n/index.ts): a JS chunk would be loaded by ComfyUI as an extension, a .json
 * file is only served. The English table stays in the module. */
function emitLocales(): Plugin {
  return {
    name: "comfyui-assistant-locales",
    apply: "build",
    generateBundle() {
      for (const [tag, table] of Object.entries(TABLES)) {
        this.emitFile({ type: "asset", fileName: `locales/${tag}.json`, source: JSON.stringify(table) });
      }
    },
  };
}

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as {
  version: string;
};

export default defineConfig(({ mode }) => {
  const playground = mode === "playground";
  return {
    plugins: [
      react(),
      injectCss(playground ? "cua-playground-css" : "cua-panel-css"),
      licenseNotices("THIRD_PARTY_LICENSES.txt"),
      playground ? [] : emitLocales(),
    ],
    define: {
      "process.env.NODE_ENV": JSON.stringify("production"),
      __PANEL_VERSION__: JSON.stringify(pkg.version),
    },
    build: playground
      ? {
          outDir: "playground-dist",
          emptyOutDir: true,
          target: "es2022",
          minify: true,
          rollupOptions: {
            input: "src/playground/main.ts",
            external: [APP_MODULE],
            output: { entryFileNames: "playground.js", format: "es", codeSplitting: false },
          },
        }
      : {
          outDir: "dist",
          emptyOutDir: true,
          chunkSizeWarningLimit: 1500, // one self-contained module by design; budget: 450 KB gz
          target: "es2022",
          minify: true,
          cssCodeSplit: false,
          rollupOptions: {
            input: "src/extension.ts",
            external: [APP_MODULE],
            output: {
              entryFileNames: "comfyui-assistant.js",
              format: "es",
              codeSplitting: false,
            },
          },
        },
    test: {
      environment: "happy-dom",
      include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
      setupFiles: ["test/vitest.setup.ts"],
    },
  };
});
