// An answer's markdown in blocks, each parsed on its own: while an answer streams, only its last
// block changes, so each chunk parses that block and not the whole answer again (a 5,000-word
// answer took longer to parse than the 10 ms between its words). A block ends at a blank line
// followed by a line that starts a new paragraph, heading, table or fence at the left margin;
// never inside a fenced code block, and never before a list item, a quote or an indented line
// (they continue the list, the quote or the block above).

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const CONTINUES = /^(\s|[-*+] |\d{1,9}[.)] |>)/;

/** `text` cut into blocks that render, one after the other, as the whole text does. */
export function markdownBlocks(text: string): string[] {
  const lines = text.split("\n");
  const blocks: string[] = [];
  let start = 0;
  let fence: string | null = null;
  let blank = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const mark = FENCE.exec(line)?.[1];
    if (fence !== null) {
      if (mark && mark[0] === fence[0] && mark.length >= fence.length && line.trim() === mark) fence = null;
      continue;
    }
    if (blank && line.trim() !== "" && !CONTINUES.test(line)) {
      blocks.push(lines.slice(start, i).join("\n"));
      start = i;
    }
    if (mark) fence = mark;
    blank = line.trim() === "";
  }
  blocks.push(lines.slice(start).join("\n"));
  return blocks;
}
