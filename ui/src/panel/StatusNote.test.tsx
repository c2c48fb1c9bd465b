import { vi } from "vitest";

// React's test helpers (act) exist only in its development build (see Panel.test.tsx).
const nodeEnv = vi.hoisted(() => {
  const before = process.env["NODE_ENV"];
  process.env["NODE_ENV"] = "test";
  return before;
});

import { cleanup, render, screen } from "@testing-library/react";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { StatusNote } from "./Messages";

afterEach(cleanup);
afterAll(() => {
  process.env["NODE_ENV"] = nodeEnv;
});

describe("StatusNote", () => {
  it("shows what the server is doing before the answer, and when it is done", () => {
    render(<StatusNote data={{ text: "Summarizing earlier messages…", done: false }} />);
    const note = screen.getByRole("status");
    expect(note.textContent).toBe("Summarizing earlier messages…");
    expect(note.dataset.done).toBe("false");
  });

  it("draws nothing for a part without a text (it comes over the wire)", () => {
    const { container } = render(<StatusNote data={{ done: true }} />);
    expect(container.textContent).toBe("");
    render(<StatusNote data={null} />);
    expect(screen.queryByRole("status")).toBeNull();
  });
});
