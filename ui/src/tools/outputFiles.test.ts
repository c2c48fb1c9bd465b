import { describe, expect, it } from "vitest";
import { annotatedName, mediaKind, outputFiles, parseOutputName, viewRoute } from "./outputFiles";

describe("ComfyUI's annotated file names", () => {
  it("read back as the file /view serves: folder, name, type", () => {
    expect(parseOutputName("sub/dir/x.png [output]")).toEqual({ filename: "x.png", subfolder: "sub/dir", type: "output" });
    expect(parseOutputName("ComfyUI_00001_.png [temp]")).toEqual({ filename: "ComfyUI_00001_.png", subfolder: "", type: "temp" });
    expect(parseOutputName("a b/my [final] cut.webm [output]")).toEqual({ filename: "my [final] cut.webm", subfolder: "a b", type: "output" });
    expect(parseOutputName("win\\sub\\y.jpg [output]")).toEqual({ filename: "y.jpg", subfolder: "win/sub", type: "output" });
    // no annotation: the output folder, as ComfyUI's own annotated-path reader takes it
    expect(parseOutputName("plain.png")).toEqual({ filename: "plain.png", subfolder: "", type: "output" });
  });

  it("round-trip with the names the run's watcher writes", () => {
    for (const item of [
      { filename: "x.png", subfolder: "", type: "output" },
      { filename: "ComfyUI_temp_abcd_00001_.png", subfolder: "previews/a", type: "temp" },
    ]) {
      expect(parseOutputName(annotatedName(item))).toEqual(item);
    }
    expect(annotatedName({ filename: "x.png" })).toBe("x.png [output]");
  });

  it("are picked out of a run's outputs; other values are not files", () => {
    const outputs = {
      9: { images: ["a.png [output]", "b.png [temp]"], animated: [false] },
      12: { text: ["a caption"], gifs: ["v/clip.mp4 [output]"] },
    };
    expect(outputFiles(outputs)).toEqual(["a.png [output]", "b.png [temp]", "v/clip.mp4 [output]"]);
  });

  it("say how the panel shows the file, and where /view serves it", () => {
    expect(["x.PNG", "y.webp", "z.gif", "w.mp4", "v.webm", "m.glb", "a.flac"].map(mediaKind)).toEqual([
      "image", "image", "image", "video", "video", "other", "other",
    ]);
    expect(viewRoute({ filename: "my cut&1.png", subfolder: "a/b", type: "temp" })).toBe(
      "/view?filename=my+cut%261.png&subfolder=a%2Fb&type=temp",
    );
  });
});
