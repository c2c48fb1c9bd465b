import { describe, expect, it } from "vitest";
import type { Notice } from "../runtime/chatStore";
import { noticePlace } from "./Notices";

const note = (after: string | null | undefined): Notice => ({ id: "n", kind: "info", title: "t", after });

describe("where a panel note shows", () => {
  it("after the message that was last when it was noted, before the first when there was none, else at the end", () => {
    const ids = new Set(["m1", "m2"]);
    expect(noticePlace(note("m1"), ids)).toBe("m1");
    expect(noticePlace(note(null), ids)).toBeNull();
    expect(noticePlace(note(undefined), ids)).toBeNull();
    expect(noticePlace(note("gone"), ids)).toBe("end"); // its answer was given again
  });
});
