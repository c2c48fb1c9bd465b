// The one place that imports ComfyUI's app module. ComfyUI serves it at /scripts/app.js (the
// playground serves the same path); the bundle keeps this import as it is.
import type { ComfyApp } from "./host/comfy";
// @ts-ignore -- resolved by ComfyUI at run time, not by this build
import { app as comfyApp } from "../../scripts/app.js";

export const app = comfyApp as ComfyApp;
