// Builds a model worker image of models/ without Docker Hub or PyPI, the way the tests do
// (test/harness/model-images.ts), and prints its name: `npx tsx test/harness/build-model-image.ts tts-espeak`
// (or `image-fixture`). Needs root for the chroot and a Debian mirror (docs/models.md, "Building
// the image").
import { ensureImageFixtureImage, ensureTtsEspeakImage } from './model-images.ts';

const builders: Record<string, () => Promise<string>> = { 'tts-espeak': ensureTtsEspeakImage, 'image-fixture': ensureImageFixtureImage };
const which = process.argv[2] ?? '';
const build = builders[which];
if (!build) {
  process.stderr.write(`usage: npx tsx test/harness/build-model-image.ts ${Object.keys(builders).join('|')}\n`);
  process.exit(2);
}
process.stdout.write(`${await build()}\n`);
