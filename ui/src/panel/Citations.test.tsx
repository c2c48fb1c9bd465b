import { vi } from "vitest";

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { formatDate, setLocale } from "../i18n";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  Cite,
  DocumentsContext,
  documentsIn,
  documentsOf,
  remarkCitations,
  safeUrl,
  sourceView,
  type CitedDocument,
} from "./Citations";

afterEach(cleanup);
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
});

const ksampler: CitedDocument = {
  citation_id: 1,
  title: "KSampler",
  contents: "KSampler denoises a latent image.",
  metadata: { source: "node docs", node_type: "KSampler", origin: "embedded-docs" },
};
const page: CitedDocument = {
  citation_id: 2,
  title: "A guide",
  contents: "About samplers.",
  metadata: { source: "url", url: "https://example.com/guide" },
};

function show(text: string, docs: CitedDocument[] = [ksampler, page]) {
  const map = new Map(docs.map((d) => [d.citation_id, d]));
  return render(
    <DocumentsContext.Provider value={map}>
      <Markdown remarkPlugins={[remarkGfm, remarkCitations]} components={{ cite: Cite }}>
        {text}
      </Markdown>
    </DocumentsContext.Provider>,
  );
}

describe("documents", () => {
  it("reads the documents of tool outputs, first holder of an id wins", () => {
    expect(documentsOf({ documents: [ksampler, { citation_id: "2", title: "x" }, null, 5] })).toEqual([ksampler]);
    expect(documentsOf("documents")).toEqual([]);
    expect(documentsOf({ documents: { a: 1 } })).toEqual([]);
    const messages = [
      { content: [{ type: "text", text: "[1]" }] },
      { content: [{ type: "tool-call", result: { documents: [ksampler] } }] },
      { content: [{ type: "tool-call", result: { documents: [{ ...ksampler, title: "later" }, page] } }] },
      {},
    ];
    const found = documentsIn(messages);
    expect([...found.keys()]).toEqual([1, 2]);
    expect(found.get(1)?.title).toBe("KSampler");
  });

  it("opens only http and https links", () => {
    expect(safeUrl("https://example.com/a")).toBe("https://example.com/a");
    expect(safeUrl("http://x.org")).toBe("http://x.org/");
    expect(safeUrl("javascript:alert(1)")).toBeNull();
    expect(safeUrl("data:text/html,hi")).toBeNull();
    expect(safeUrl("not a url")).toBeNull();
    expect(safeUrl(5)).toBeNull();
    expect(sourceView(ksampler)).toEqual({ label: "Node documentation · KSampler", href: null });
    const at = "2026-03-01T09:30:00Z";
    expect(sourceView({ ...page, metadata: { source: "conversation", createdAt: at } }).label).toBe(`Earlier in this chat · ${formatDate(new Date(at), "en")}`);
    expect(sourceView({ ...page, metadata: { source: "conversation", createdAt: "yesterday" } }).label).toBe("Earlier in this chat · yesterday");
    setLocale("zh");
    try {
      expect(sourceView(ksampler).label).toBe("节点文档 · KSampler");
      expect(sourceView({ ...page, metadata: { source: "conversation", createdAt: at } }).label).toBe(`本对话中较早的内容 · ${formatDate(new Date(at), "zh")}`);
    } finally {
      setLocale("en");
    }
    expect(sourceView({ ...page, metadata: { source: "url", url: "javascript:x" } }).href).toBeNull();
    expect(sourceView({ ...page, metadata: { source: "project", path: "notes/a.md" } }).label).toBe(
      "Project document · notes/a.md",
    );
  });
});

describe("citation chips", () => {
  it("draws a known [n] as a chip and leaves unknown ones as text", () => {
    const { container } = show("KSampler denoises [1], see the guide [2][3].");
    const chips = screen.getAllByRole("button");
    expect(chips.map((b) => b.getAttribute("aria-label"))).toEqual(["Source 1: KSampler", "Source 2: A guide"]);
    expect(container.textContent).toBe("KSampler denoises 1, see the guide 2[3].");
  });

  it("leaves code blocks, inline code and links alone", () => {
    const { container } = show("`arr[1]` and\n\n```python\nx = a[1]\n```\n\n[see [1]](https://example.com) ok");
    expect(screen.queryAllByRole("button")).toEqual([]);
    expect(container.querySelector("pre code")?.textContent).toBe("x = a[1]\n");
    expect(container.querySelector("p code")?.textContent).toBe("arr[1]");
    expect(container.querySelector("a")?.getAttribute("href")).toBe("https://example.com");
  });

  it("keeps the markdown around it (emphasis, lists)", () => {
    const { container } = show("- **bold [1]**\n- item");
    expect(container.querySelector("li strong button")?.textContent).toBe("1");
    expect(container.querySelectorAll("li").length).toBe(2);
  });

  it("opens a popover with the title, source and contents; Escape closes it", () => {
    show("It denoises [1].");
    const chip = screen.getByRole("button", { name: "Source 1: KSampler" });
    expect(chip.getAttribute("aria-expanded")).toBe("false");
    fireEvent.click(chip);
    const pop = screen.getByRole("dialog", { name: "Source 1: KSampler" });
    expect(pop.textContent).toContain("Node documentation · KSampler");
    expect(pop.textContent).toContain("KSampler denoises a latent image.");
    expect(chip.getAttribute("aria-expanded")).toBe("true");
    fireEvent.keyDown(window, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("links a web source in a new tab", () => {
    show("See [2].");
    fireEvent.click(screen.getByRole("button", { name: "Source 2: A guide" }));
    const link = screen.getByRole("link", { name: "Web page" });
    expect(link.getAttribute("href")).toBe("https://example.com/guide");
    expect(link.getAttribute("target")).toBe("_blank");
    expect(link.getAttribute("rel")).toBe("noopener noreferrer");
  });
});
