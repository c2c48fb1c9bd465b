import { vi } from "vitest";

/** Blocks parsed: react-markdown itself, counted. */
const parsed = vi.hoisted(() => ({ count: 0 }));
vi.mock("react-markdown", async (original) => {
  const real = await original<typeof import("react-markdown")>();
  const Counted: typeof real.default = (props) => {
    parsed.count++;
    return real.default(props);
  };
  return { ...real, default: Counted };
});

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { TextMessagePartProvider } from "@assistant-ui/react";
import { MarkdownTextPrimitive, type CodeHeaderProps } from "@assistant-ui/react-markdown";
import { cleanup, render, waitFor } from "@testing-library/react";
import type { FC, ReactNode } from "react";
import remarkGfm from "remark-gfm";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MarkdownBlock, withCodeBlocks } from "./markdownBlock";
import { MarkdownText } from "./Messages";

afterEach(cleanup);
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
});

const running = { type: "running" } as const;
const answer = (...blocks: string[]) => blocks.join("\n\n");
const show = (text: string) => <MarkdownText type="text" text={text} status={running} />;

describe("MarkdownText while an answer streams", () => {
  it("shows each block's own markdown, the same as the answer drawn at once", () => {
    const text = answer("# Washed out", "Your **CFG** is low.", "- raise it\n- keep 20 steps", "The end");
    const streamed = render(show("# Washed out"));
    for (const end of [2, 3, 4]) streamed.rerender(show(answer(...text.split("\n\n").slice(0, end))));
    const once = render(show(text));
    expect(streamed.container.innerHTML).toBe(once.container.innerHTML);
    expect(streamed.container.querySelector("h1")?.textContent).toBe("Washed out");
    expect(streamed.container.querySelector("strong")?.textContent).toBe("CFG");
    expect([...streamed.container.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["raise it", "keep 20 steps"]);
  });

  it("draws again only the block that changed: the blocks before it are not rendered on each chunk", async () => {
    const blocks = Array.from({ length: 20 }, (_, i) => `Paragraph ${i} of the answer.`);
    const view = render(show(answer(...blocks)));
    await waitFor(() => expect(view.container.querySelector(".cua-md-later")).toBeNull());
    parsed.count = 0;
    view.rerender(show(answer(...blocks) + " More"));
    view.rerender(show(answer(...blocks) + " More words"));
    expect(parsed.count).toBe(2); // the last block, twice; not the nineteen before it
    view.rerender(show(answer(...blocks, "A new block")));
    expect(parsed.count).toBe(4); // the new block and the one before it (its text now ends in a blank line)
    expect(view.container.querySelectorAll("p")).toHaveLength(21);
    expect(view.container.querySelectorAll("p")[20]?.textContent).toBe("A new block");
  });

  it("draws a long answer's end as markdown at once, the blocks before it as their text, then as markdown", async () => {
    const blocks = Array.from({ length: 12 }, (_, i) => `Paragraph **${i}** of the answer.`);
    const streamed = render(show(blocks[0]!));
    for (let end = 2; end <= blocks.length; end++) streamed.rerender(show(answer(...blocks.slice(0, end))));
    const shown = render(show(answer(...blocks)));
    const later = [...shown.container.querySelectorAll(".cua-md-later")].map((p) => p.textContent);
    const strong = () => [...shown.container.querySelectorAll("strong")].map((b) => b.textContent);
    expect(later).toEqual(blocks.slice(0, 6)); // the blocks before the last six: their text, for now
    expect(strong()).toEqual(["6", "7", "8", "9", "10", "11"]);
    await waitFor(() => expect(shown.container.querySelector(".cua-md-later")).toBeNull());
    expect(strong()).toEqual(blocks.map((_, i) => String(i)));
    expect(shown.container.innerHTML).toBe(streamed.container.innerHTML);
  });
});

const CodeHeader: FC<CodeHeaderProps> = ({ language, code }) => (
  <div className="header">
    {language || "text"}: {code.length} characters
  </div>
);
const Bare: FC<{ children?: ReactNode }> = ({ children }) => <>{children}</>;
const plugins = [remarkGfm];

const ANSWER = [
  "# Why it looks washed out",
  "Your **CFG** is low and the sampler is `euler`, see [the docs](https://example.com/docs).",
  "1. Raise the CFG to 7.\n2. Use `dpmpp_2m`:\n\n   keep the steps at 20.",
  "> a quote\n>\n> that goes on",
  '```json\n{"steps": 20,\n\n\n "cfg": 7.5}\n```',
  "```\nno language\n```",
  "    an indented code block\n\n    still the same one",
  "| node | steps |\n| --- | --- |\n| KSampler | 20 |",
  "~~strike~~ and a task:\n\n- [x] done",
];

describe("MarkdownBlock", () => {
  it("draws each block as assistant-ui's markdown primitive does, code blocks with their header", () => {
    const components = withCodeBlocks({}, CodeHeader);
    for (const block of ANSWER) {
      const ours = render(<MarkdownBlock block={block} components={components} remarkPlugins={plugins} />);
      const theirs = render(
        <TextMessagePartProvider text={block}>
          <MarkdownTextPrimitive containerComponent={Bare} remarkPlugins={plugins} components={{ CodeHeader }} smooth={false} />
        </TextMessagePartProvider>,
      );
      expect(ours.container.innerHTML).toBe(theirs.container.innerHTML);
      expect(ours.container.innerHTML.length).toBeGreaterThan(block.length / 2);
    }
    const fence = render(<MarkdownBlock block={ANSWER[4]!} components={components} remarkPlugins={plugins} />).container;
    expect(fence.querySelector(".header")?.textContent).toBe(`json: ${'{"steps": 20,\n\n\n "cfg": 7.5}\n'.length} characters`);
    expect(fence.querySelector("pre > code.language-json")?.textContent).toBe('{"steps": 20,\n\n\n "cfg": 7.5}\n');
  });
});
