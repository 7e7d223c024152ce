//! Deterministic generated inputs for the benchmarks (`count_bench`,
//! `bench_gen`): prose, code, JSONL and Claude Code transcripts.
#![allow(dead_code)] // each example uses a part

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.next() % xs.len()]
    }
}

const WORDS: &[&str] = &[
    "the",
    "context",
    "window",
    "agent",
    "keeps",
    "state",
    "of",
    "a",
    "project",
    "and",
    "resumes",
    "work",
    "after",
    "compaction",
    "tokens",
    "count",
    "model",
    "file",
    "session",
    "because",
    "we",
    "never",
    "lose",
    "decisions",
    "tests",
    "passed",
    "Rust",
    "café",
    "naïve",
    "über",
    "2025",
];
const IDENTS: &[&str] = &[
    "state", "count", "tokens", "path", "cursor", "enc", "buf", "len", "i",
];

/// Run-on text: one pre-tokenizer piece of random lowercase letters.
#[allow(dead_code)] // not every includer uses every generator
pub fn word(rng: &mut Rng, size: usize) -> String {
    (0..size)
        .map(|_| char::from(b'a' + (rng.next() % 26) as u8))
        .collect()
}

/// Run-on text: one piece of common Han characters, as Chinese prose
/// without punctuation.
#[allow(dead_code)]
pub fn cjk(rng: &mut Rng, size: usize) -> String {
    const HAN: &str = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只从现因开些长明样老";
    let han: Vec<char> = HAN.chars().collect();
    let mut s = String::with_capacity(size + 4);
    while s.len() < size {
        s.push(han[rng.next() % han.len()]);
    }
    s
}

pub fn prose(rng: &mut Rng, size: usize) -> String {
    let mut s = String::with_capacity(size + 1024);
    while s.len() < size {
        // Paragraphs are single long lines separated by blank lines.
        for _ in 0..(3 + rng.next() % 6) {
            let n = 6 + rng.next() % 18;
            for i in 0..n {
                let w = rng.pick(WORDS);
                if i == 0 {
                    let mut c = w.chars();
                    s.extend(c.next().map(|f| f.to_ascii_uppercase()));
                    s.push_str(c.as_str());
                } else {
                    s.push(' ');
                    s.push_str(w);
                }
            }
            s.push_str(rng.pick(&[". ", ", then ", "; ", "! "]));
        }
        s.push_str("\n\n");
    }
    s
}

pub fn code(rng: &mut Rng, size: usize) -> String {
    let mut s = String::with_capacity(size + 1024);
    while s.len() < size {
        let f = rng.pick(IDENTS);
        s.push_str(&format!(
            "/// Returns the {f}.\npub fn get_{f}_{}(x: &str) -> Result<usize> {{\n",
            rng.next() % 1000
        ));
        for _ in 0..(2 + rng.next() % 8) {
            let (a, b) = (rng.pick(IDENTS), rng.pick(IDENTS));
            s.push_str(&format!(
                "    let {a} = {b}.len() + {};\n",
                rng.next() % 100
            ));
            if rng.next().is_multiple_of(3) {
                s.push_str(&format!(
                    "    if {a} > 0 {{\n        return Ok({a} * 2);\n    }}\n"
                ));
            }
        }
        s.push_str("    Ok(0)\n}\n\n");
    }
    s
}

pub fn jsonl(rng: &mut Rng, size: usize) -> String {
    let mut s = String::with_capacity(size + 1024);
    while s.len() < size {
        s.push_str(&format!(
            "{{\"type\":\"{}\",\"ts\":\"2025-11-0{}T12:{:02}:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"{} {} {}\",\"usage\":{{\"input_tokens\":{}}}}}}}\n",
            rng.pick(&["user", "assistant", "tool_result"]),
            1 + rng.next() % 9,
            rng.next() % 60,
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.next() % 100_000
        ));
    }
    s
}

/// A Claude Code transcript of about `size` bytes: user prompts, assistant
/// text and tool calls with usage, tool results; it ends on an assistant
/// line whose context is `final_tokens`.
pub fn transcript(rng: &mut Rng, size: usize, final_tokens: u64) -> String {
    let session = "0b9f5c2e-7c1a-4e0f-9d55-3f2a6c1b8e47";
    let mut s = String::with_capacity(size + 4096);
    let mut n = 0u64;
    let envelope = |n: u64, kind: &str| {
        format!(
            "\"parentUuid\":\"{:08x}-0000-4000-8000-000000000000\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/dev/project\",\"sessionId\":\"{session}\",\"version\":\"2.1.39\",\"gitBranch\":\"main\",\"type\":\"{kind}\",\"uuid\":\"{:08x}-0000-4000-8000-000000000000\",\"timestamp\":\"2026-02-11T21:{:02}:{:02}.000Z\"",
            n.saturating_sub(1),
            n,
            (n / 60) % 60,
            n % 60
        )
    };
    let assistant = |n: u64, context: u64, text: &str| {
        format!(
            "{{{},\"message\":{{\"model\":\"claude-opus-4-6\",\"id\":\"msg_{n:016x}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"stop_reason\":null,\"usage\":{{\"input_tokens\":1,\"cache_creation_input_tokens\":500,\"cache_read_input_tokens\":{},\"output_tokens\":120}}}},\"requestId\":\"req_{n:016x}\"}}\n",
            envelope(n, "assistant"),
            serde_json::to_string(text).unwrap(),
            context.saturating_sub(501)
        )
    };
    while s.len() < size {
        n += 1;
        let len = 200 + rng.next() % 400;
        let prompt = prose(rng, len);
        s.push_str(&format!(
            "{{{},\"message\":{{\"role\":\"user\",\"content\":{}}}}}\n",
            envelope(n, "user"),
            serde_json::to_string(prompt.trim()).unwrap()
        ));
        n += 1;
        let context = 20_000 + (n * 37) % 100_000;
        s.push_str(&assistant(n, context, prose(rng, 300).trim()));
        n += 1;
        let len = 1000 + rng.next() % 3000;
        let output = code(rng, len);
        s.push_str(&format!(
            "{{{},\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_{n:016x}\",\"content\":{}}}]}}}}\n",
            envelope(n, "user"),
            serde_json::to_string(&output).unwrap()
        ));
    }
    n += 1;
    s.push_str(&assistant(n, final_tokens, "Done."));
    s
}

/// A long autonomous run in Claude Code's transcript format: the user's one prompt (its first
/// line, written by [`autonomous_prompt`]), then only the agent's tool calls (`Edit`s of
/// numbered files and `Bash` commands) with their results and usage, about `size` bytes, ending
/// on an assistant line whose context is `final_tokens`. The last prompt is then as far back as
/// the file is long.
pub fn autonomous(rng: &mut Rng, size: usize, final_tokens: u64) -> String {
    let mut s = String::with_capacity(size + 4096);
    let mut n = 0u64;
    let line = |n: u64, kind: &str, message: String| {
        format!(
            "{{\"parentUuid\":\"{:08x}-0000-4000-8000-000000000000\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/dev/project\",\"sessionId\":\"{AUTONOMOUS_SESSION}\",\"version\":\"2.1.39\",\"gitBranch\":\"main\",\"type\":\"{kind}\",\"uuid\":\"{:08x}-0000-4000-8000-000000000000\",\"timestamp\":\"2026-02-11T21:{:02}:{:02}.000Z\",\"message\":{message}}}\n",
            n.saturating_sub(1),
            n,
            (n / 60) % 60,
            n % 60
        )
    };
    let usage = |context: u64| {
        format!(
            "\"usage\":{{\"input_tokens\":1,\"cache_creation_input_tokens\":500,\"cache_read_input_tokens\":{},\"output_tokens\":120}}",
            context.saturating_sub(501)
        )
    };
    while s.len() < size {
        n += 1;
        let context = 20_000 + (n * 37) % 100_000;
        let id = format!("toolu_{n:016x}");
        let bash = n.is_multiple_of(3);
        let input = if bash {
            format!(
                "{{\"command\":\"cargo test --lib m{}\",\"description\":\"run the tests\"}}",
                n % 50
            )
        } else {
            format!(
                "{{\"file_path\":\"/home/dev/project/src/m{}.rs\",\"old_string\":\"a\",\"new_string\":{}}}",
                n % 400,
                serde_json::to_string(&code(rng, 200)).unwrap()
            )
        };
        let tool = if bash { "Bash" } else { "Edit" };
        s.push_str(&line(
            n,
            "assistant",
            format!(
                "{{\"model\":\"claude-opus-4-6\",\"id\":\"msg_{n:016x}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"{tool}\",\"input\":{input}}}],\"stop_reason\":null,{}}}",
                usage(context)
            ),
        ));
        n += 1;
        let len = 1000 + rng.next() % 3000;
        s.push_str(&line(
            n,
            "user",
            format!(
                "{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"{id}\",\"content\":{},\"is_error\":false}}]}}",
                serde_json::to_string(&code(rng, len)).unwrap()
            ),
        ));
    }
    n += 1;
    s.push_str(&line(
        n,
        "assistant",
        format!(
            "{{\"model\":\"claude-opus-4-6\",\"id\":\"msg_{n:016x}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"Done.\"}}],\"stop_reason\":null,{}}}",
            usage(final_tokens)
        ),
    ));
    s
}

const AUTONOMOUS_SESSION: &str = "5d7e2a10-3c4b-4f6e-8a9d-1e2f3a4b5c6d";

/// The first line of an [`autonomous`] run: the one prompt that set its task.
pub fn autonomous_prompt() -> String {
    format!(
        "{{\"parentUuid\":null,\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/dev/project\",\"sessionId\":\"{AUTONOMOUS_SESSION}\",\"version\":\"2.1.39\",\"gitBranch\":\"main\",\"type\":\"user\",\"uuid\":\"00000000-0000-4000-8000-000000000000\",\"timestamp\":\"2026-02-11T20:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"Port every module under src/ to the new reader API and keep the tests green; work through them without stopping.\"}}}}\n"
    )
}
