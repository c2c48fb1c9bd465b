import { vi } from "vitest";

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { TextMessagePartProvider } from "@assistant-ui/react";
import { MarkdownTextPrimitive, type CodeHeaderProps } from "@assistant-ui/react-markdown";
import { cleanup, render } from "@testing-library/react";
import type { FC, ReactNode } from "react";
import remarkGfm from "remark-gfm";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MarkdownBlock, withCodeBlocks } from "./markdownBlock";

afterEach(cleanup);
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
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
