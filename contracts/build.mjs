// Compile src/*.sol with the pinned solcjs and write contracts/build/<Contract>.json
// (ABI, creation and runtime bytecode). `node build.mjs --out DIR` writes elsewhere, which the
// test suite uses to check that recompiling gives the committed bytes.
//
// Source names are relative ("src/Vault.sol", "@openzeppelin/...") so the metadata hash
// embedded in the bytecode never depends on where the repository is checked out.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const solc = require("solc");

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONTRACTS = ["ChipToken", "TournamentVault"];
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  // Cancun: supported by anvil, geth and the major L2s; newer defaults are not everywhere yet.
  evmVersion: "cancun",
  metadata: { bytecodeHash: "ipfs" },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};

function findImport(name) {
  const candidates = [path.join(HERE, name), path.join(HERE, "node_modules", name)];
  for (const file of candidates) {
    if (fs.existsSync(file)) return { contents: fs.readFileSync(file, "utf8") };
  }
  return { error: `not found: ${name}` };
}

const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
const outDir = outIndex >= 0 ? path.resolve(args[outIndex + 1]) : path.join(HERE, "build");

const sources = {};
for (const name of CONTRACTS) {
  const rel = `src/${name}.sol`;
  sources[rel] = { content: fs.readFileSync(path.join(HERE, rel), "utf8") };
}
const input = { language: "Solidity", sources, settings: SETTINGS };
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport }));

let failed = false;
for (const diag of output.errors ?? []) {
  console.error(diag.formattedMessage);
  if (diag.severity === "error") failed = true;
}
if (failed) process.exit(1);

fs.mkdirSync(outDir, { recursive: true });
for (const name of CONTRACTS) {
  const compiled = output.contracts[`src/${name}.sol`][name];
  const artifact = {
    contractName: name,
    sourceName: `src/${name}.sol`,
    compiler: { name: "solc", version: solc.version(), settings: SETTINGS },
    abi: compiled.abi,
    bytecode: "0x" + compiled.evm.bytecode.object,
    deployedBytecode: "0x" + compiled.evm.deployedBytecode.object,
  };
  fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(artifact, null, 2) + "\n");
}
console.log(`compiled ${CONTRACTS.join(", ")} with solc ${solc.version()} into ${outDir}`);
