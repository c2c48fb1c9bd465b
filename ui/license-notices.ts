// A build plugin that writes the licence notices of every npm package whose code ends up in the
// bundle (THIRD_PARTY_LICENSES.txt beside it), read from the modules the bundler put in its
// chunks: each package's name, version, declared licence and the text of its licence file.
// Sorted by name and free of paths and dates, so a rebuild on any machine gives the same file,
// and CI's check that ui/dist matches its sources covers it too.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Plugin } from "vite";

const LICENCE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt))?$/i;

interface PackageNotice {
  name: string;
  version: string;
  license: string;
  text: string;
}

/** The package folder a module file belongs to (the last node_modules/<name> in its path). */
export function packageRoot(moduleId: string): string | null {
  const path = moduleId.replace(/^\0/, "").split("?")[0]?.replaceAll("\\", "/") ?? "";
  const at = path.lastIndexOf("/node_modules/");
  if (at < 0) return null;
  const rest = path.slice(at + "/node_modules/".length).split("/");
  const depth = rest[0]?.startsWith("@") ? 2 : 1;
  if (rest.length <= depth) return null;
  return path.slice(0, at + "/node_modules/".length) + rest.slice(0, depth).join("/");
}

function notice(root: string): PackageNotice {
  const meta = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    name: string;
    version: string;
    license?: string | { type?: string };
    author?: string | { name?: string };
    repository?: string | { url?: string };
  };
  const license =
    typeof meta.license === "string" ? meta.license : (meta.license?.type ?? "UNKNOWN");
  const files = readdirSync(root).filter((f) => LICENCE_FILE.test(f)).sort();
  const author = typeof meta.author === "string" ? meta.author : meta.author?.name;
  const source = typeof meta.repository === "string" ? meta.repository : meta.repository?.url;
  const text =
    files.map((f) => readFileSync(join(root, f), "utf8").trim()).join("\n\n") ||
    [
      `The package ships no licence file; it declares ${license}.`,
      author ? `Author: ${author}.` : "",
      source ? `Source: ${source}.` : "",
    ]
      .filter(Boolean)
      .join(" ");
  return { name: meta.name, version: meta.version, license, text };
}

export function formatNotices(notices: PackageNotice[]): string {
  const head =
    "Third-party software in this bundle, with its licence.\n" +
    "Generated at build by ui/license-notices.ts; do not edit.\n";
  const parts = notices.map(
    (n) =>
      `${"=".repeat(78)}\n${n.name} ${n.version} (${n.license})\n${"=".repeat(78)}\n` +
      n.text,
  );
  return [head, ...parts].join("\n\n") + "\n";
}

export function licenseNotices(fileName: string): Plugin {
  return {
    name: "comfyui-assistant-license-notices",
    apply: "build",
    generateBundle(_options, bundle) {
      const roots = new Set<string>();
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== "chunk") continue;
        for (const id of Object.keys(chunk.modules)) {
          const root = packageRoot(id);
          if (root && existsSync(join(root, "package.json"))) {
            roots.add(root);
          }
        }
      }
      const byName = new Map<string, PackageNotice>();
      for (const root of roots) {
        const n = notice(root);
        byName.set(`${n.name}@${n.version}`, n);
      }
      const sorted = [...byName.values()].sort((a, b) =>
        a.name === b.name ? a.version.localeCompare(b.version) : a.name.localeCompare(b.name),
      );
      this.emitFile({ type: "asset", fileName, source: formatNotices(sorted) });
    },
  };
}
