import "../../test/reactTestEnv";
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { PlainText } from "./Messages";

afterEach(cleanup);

describe("the user's own edits, noted on their next message", () => {
  it("are shown as the panel's note under the user's words, not as typed", () => {
    const note = "[Since your last answer the user changed the workflow by hand (keep these changes unless asked): 5 KSampler: steps 20 → 28]";
    render(<PlainText text={note} />);
    const shown = screen.getByRole("note", { name: "What you changed in the workflow by hand (added by the panel)" });
    expect(shown.textContent).toBe(note);
    cleanup();
    render(<PlainText text="Since your last answer I changed the steps" />);
    expect(screen.queryByRole("note")).toBeNull();
  });
});
