"""ComfyUI questions a hobbyist asks and the assistant's plain answers (bench/memory_prose.py's
talk: prose_talk)."""

from __future__ import annotations

NODES = (
    (
        "the KSampler",
        "It does the actual denoising: it starts from noise and, step by step, "
        "turns it into a picture that matches your prompt. Steps, cfg, sampler and scheduler "
        "all live there.",
    ),
    (
        "VAE Decode",
        "It turns the latent, the compressed version the model works in, back "
        "into normal pixels you can look at. Without it you'd only have the latent.",
    ),
    (
        "CLIP Text Encode",
        "It turns your prompt text into the numbers the model understands. "
        "You usually have two of them, one for the positive and one for the negative prompt.",
    ),
    (
        "Empty Latent Image",
        "It makes the blank starting canvas for the sampler, and it's "
        "where you set the width, the height and how many images come out at once.",
    ),
    (
        "Load Checkpoint",
        "It loads the main model file, and gives you the model, the text "
        "encoder and the VAE as separate outputs you wire into the rest of the graph.",
    ),
    (
        "Preview Image",
        "It shows the result in the interface without saving it to disk, "
        "which is handy while you're still experimenting.",
    ),
    (
        "Save Image",
        "It writes the finished picture to your output folder, with the workflow "
        "tucked inside the file so you can drag it back in later.",
    ),
    (
        "Load Image",
        "It brings one of your own pictures into the graph, for img2img, "
        "inpainting, or as a reference for a control model.",
    ),
    (
        "Upscale Image By",
        "It simply resizes the pixels by a factor. It's quick but it doesn't "
        "add detail, so people often follow it with a light second sampling pass.",
    ),
    (
        "the LoRA loader",
        "It patches a small add-on into the model and the text encoder, so "
        "the model learns a style or a character without replacing the whole checkpoint.",
    ),
    (
        "Apply ControlNet",
        "It feeds extra guidance, like edges, depth or a pose, into the "
        "conditioning, so the picture follows a structure you give it.",
    ),
    (
        "Image Blend",
        "It mixes two images together with a chosen blend mode and strength, a "
        "bit like layers in a photo editor.",
    ),
)
NODE_USER = (
    "What does {node} node actually do?",
    "Silly question, but what is {node} node for?",
    "Can you explain {node} node in plain words?",
    "I never understood {node} node, what is it?",
)
HOW_TO = (
    (
        "Is it normal that the first run takes so long?",
        "Yes, the first run has to load the model into memory. Later runs reuse it, so they "
        "start much faster unless you switch models.",
    ),
    (
        "Should I bother with custom nodes yet?",
        "Not yet, I'd say. The built-in nodes cover a lot, and it's easier to learn what each "
        "piece does before adding more. Later, a few well-known packs are worth it.",
    ),
    (
        "What's the difference between a checkpoint and a lora?",
        "A checkpoint is the whole model. A lora is a small add-on that nudges a model towards "
        "a style, a character or a concept, and you can stack a few of them.",
    ),
    (
        "Why do my images look washed out?",
        "Often it's the VAE: some checkpoints need a specific one, and the wrong one gives dull, "
        "greyish colours. It can also be a very low cfg.",
    ),
    (
        "Can I reuse a workflow someone shared online?",
        "Yes, if they shared the image or the workflow file you can drag it into the canvas. "
        "You may need the same models and custom nodes, so check what's missing first.",
    ),
    (
        "How do I keep the same character across several images?",
        "A consistent description helps a lot, and so does a fixed seed while you vary the "
        "rest. For real consistency people use a character lora or a reference image.",
    ),
    (
        "Is there a way to queue several prompts at once?",
        "You can press queue several times with different prompts, or set the batch count. "
        "They run one after another while you do something else.",
    ),
    (
        "What size should I use for a phone wallpaper?",
        "Go for a tall shape, roughly twice as high as it is wide, at a size the model likes, "
        "then upscale at the end for a sharp result.",
    ),
    (
        "Why does the preview look different from the saved image?",
        "The preview during sampling is a rough approximation. The final decode is the real "
        "thing, so judge the finished image rather than the live preview.",
    ),
    (
        "Do I need a negative prompt at all?",
        "Not always. It helps to push away things you keep getting, but a long list of "
        "generic negatives can make images bland. Start short.",
    ),
    (
        "What does the scheduler setting change?",
        "It decides how the noise level drops across the steps. Some schedules spend more "
        "time on fine detail at the end, which can look a bit sharper.",
    ),
    (
        "How do I make the picture wider without squashing it?",
        "Change the width in the empty latent instead of stretching the result. Or outpaint "
        "the sides if you want to keep an image you already like.",
    ),
    (
        "Why are my faces so small and mushy in group shots?",
        "Small faces get very few pixels, so the model can't draw them well. A face detailer "
        "pass or a higher resolution for the whole picture usually fixes it.",
    ),
    (
        "Is it bad to leave ComfyUI running all day?",
        "Not really, it mostly just sits there. It does keep the model in memory though, so "
        "close it if you need the memory for something else.",
    ),
    (
        "What's the point of the seed?",
        "It's the starting noise. The same seed with the same settings gives the same picture, "
        "which is useful when you want to compare small changes.",
    ),
    (
        "Can ComfyUI do video?",
        "It can, with the right models and nodes, but it's much heavier than still images. "
        "Short clips at a small size are the way to start.",
    ),
    (
        "How do I get rid of the odd borders on my images?",
        "That often comes from a size the model wasn't trained on. Stick to its usual sizes, "
        "or crop the edges off and upscale what's left.",
    ),
    (
        "What's img2img actually good for?",
        "It starts from an existing picture instead of pure noise, so it keeps the overall "
        "shapes. It's great for restyling a photo or refining one of your own renders.",
    ),
    (
        "Does the order of words in the prompt matter?",
        "A bit, yes. Words near the start tend to carry more weight, so lead with what matters "
        "most and leave the small details for the end.",
    ),
    (
        "Why does the same prompt look so different on another model?",
        "Each model learned from different pictures, so it reads words its own way. Expect to "
        "adjust the prompt whenever you switch.",
    ),
    (
        "Can I run ComfyUI without a graphics card?",
        "It runs on the processor too, only much more slowly. Small images and fewer steps "
        "make it bearable for learning the ropes.",
    ),
    (
        "How do people get those really crisp details?",
        "Usually a combination: a good base image, an upscale, and a second gentle sampling "
        "pass that adds fine texture without changing the composition.",
    ),
    (
        "Is it worth learning inpainting?",
        "Definitely. Being able to redo one part of a picture without starting again saves a "
        "lot of time, and it's less fiddly than it looks.",
    ),
    (
        "What does batch size do?",
        "It makes several images in one go from the same settings with different noise. It's "
        "quicker than queuing them one by one, but it needs more memory.",
    ),
    (
        "Why are some nodes red when I load a workflow?",
        "Red usually means a node type is missing, often from a custom node pack. The manager "
        "can usually find and install what's missing.",
    ),
    (
        "How do I keep a workflow so I can reuse it?",
        "Use the menu to export it as a file, or simply keep one of its images, because the "
        "workflow is stored inside the picture.",
    ),
    (
        "Should I upscale before or after fixing faces?",
        "Usually fix faces first at the base size, then upscale, so the fixes get sharpened "
        "along with everything else.",
    ),
    (
        "Why do my prompts with lots of commas behave strangely?",
        "Long lists of loosely related words pull the model in many directions. A short, "
        "natural sentence is often clearer.",
    ),
    (
        "What's a good cfg for photos?",
        "Photos usually like it a bit lower, somewhere around five to seven, so they don't look "
        "overcooked.",
    ),
    (
        "Why does my image have two heads sometimes?",
        "That happens when the image is much bigger than the model's usual size. Render at its "
        "native size and enlarge it afterwards.",
    ),
    (
        "How long should a prompt be?",
        "Long enough to say what matters and no longer. One or two sentences plus a few style "
        "words works for most things.",
    ),
    (
        "What's the difference between the samplers, really?",
        "They're different ways of walking from noise to a picture. Some settle quickly, some "
        "add a bit of randomness at each step, and with enough steps the differences are subtle.",
    ),
)
