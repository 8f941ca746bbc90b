/** `aiflare ui`'s boot script: the sign-in starts while the page's script is still on its way or compiling. */
import { signInFromFragment } from "./signin.ts";

window.aiflareSignIn ??= signInFromFragment();
