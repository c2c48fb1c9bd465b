// ComfyUI loads this file (ui/dist/comfyui-assistant.js) as an extension script.
import { app } from "./app";

app.registerExtension({ name: "comfyui-assistant" });
