import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { describe, expect, it } from "vitest";
import { markdownBlocks } from "./markdownBlocks";

/** The markup, without the line breaks react-markdown writes between top-level elements (text
 * that does not render). */
const html = (text: string) => renderToStaticMarkup(createElement(ReactMarkdown, { remarkPlugins: [remarkGfm] }, text)).replace(/>\n+</g, "><");

const ANSWER = [
  "# Why it looks washed out",
  "Your **CFG** is low and the sampler is `euler`.",
  "",
  "## Try this",
  "",
  "1. Raise the CFG to 7.",
  "",
  "2. Use `dpmpp_2m` with karras:",
  "",
  "   keep the steps at 20.",
  "",
  "- a loose",
  "",
  "- bullet list",
  "",
  "> a quote",
  ">",
  "> that goes on",
  "",
  "```json",
  '{"steps": 20,',
  "",
  "",
  ' "cfg": 7.5}',
  "```",
  "",
  "    an indented code block",
  "",
  "    still the same one",
  "",
  "| node | steps |",
  "| --- | --- |",
  "| KSampler | 20 |",
  "",
  "~~~",
  "a tilde fence, ``` inside it",
  "",
  "~~~",
  "",
  "The end.",
].join("\n");

describe("markdownBlocks", () => {
  it("cuts at blank lines before a new paragraph, heading, table or fence: the blocks render as the whole does", () => {
    const blocks = markdownBlocks(ANSWER);
    expect(blocks.join("\n")).toBe(ANSWER);
    expect(blocks.map((b) => b.split("\n")[0])).toEqual([
      "# Why it looks washed out",
      "## Try this",
      "```json",
      "| node | steps |",
      "~~~",
      "The end.",
    ]);
    expect(blocks.map(html).join("")).toBe(html(ANSWER));
  });

  it("keeps a fence that is still open (an answer streaming) in one block", () => {
    const streaming = "Here it is:\n\n```python\nprint(1)\n\nprint(2)\n\nx = 3";
    expect(markdownBlocks(streaming)).toEqual(["Here it is:\n", "```python\nprint(1)\n\nprint(2)\n\nx = 3"]);
  });

  it("a streamed answer of many paragraphs: the blocks before the last stay the same strings as it grows", () => {
    const paragraphs = Array.from({ length: 50 }, (_, i) => `Paragraph ${i} says something.`);
    const before = markdownBlocks(paragraphs.slice(0, 49).join("\n\n") + "\n\nParagraph 49 sa");
    const after = markdownBlocks(paragraphs.join("\n\n"));
    expect(after).toHaveLength(50);
    expect(before.slice(0, 49)).toEqual(after.slice(0, 49));
    expect(markdownBlocks("")).toEqual([""]);
  });
});
