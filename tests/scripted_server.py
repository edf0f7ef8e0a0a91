"""An OpenAI-compatible chat server whose replies follow fixed rules, so that the builder's
handling of judges, writers and auditors can be checked against known answers over real HTTP,
through litellm, as a deployment would run it. And a server that accepts connections and never
answers, for timeouts.

Rules, by the model asked:
- judge-*: a JSON array grading each listed reference by the first word of its title: "core" T3,
  "tool" T2 infrastructural, "noise" T0, anything else T1; judge-b says one step less for "core"
  (T2) and replies with prose instead of JSON when the target's title holds "Unreadable".
- writer: a brief that repeats the target's title (so name removal can be seen) and padding
  words; an empty reply when the title holds "Silent".
- auditor: {"guess": ..., "confidence": 0.9} when the brief holds "famous", else an empty guess.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def judge_reply(model: str, user: str) -> str:
    title = re.search(r"^title: (.*)$", user, re.M).group(1)
    if model == "judge-b" and "Unreadable" in title:
        return "These references all look relevant to me."
    votes = []
    for index, first_word in re.findall(r"^\[(\d+)\] \S+ \(\S+\) (\w+)", user, re.M):
        tier, role = {
            "core": ("T3", "conceptual"),
            "tool": ("T2", "infrastructural"),
            "noise": ("T0", "conceptual"),
        }.get(first_word.lower(), ("T1", "conceptual"))
        if model == "judge-b" and tier == "T3":
            tier = "T2"
        votes.append(
            {
                "index": int(index),
                "tier": tier,
                "role": role,
                "rationale": f"{model} grades the {first_word} paper by how the target uses its main idea.",
            }
        )
    return "```json\n" + json.dumps(votes) + "\n```"


def writer_reply(user: str, terse: bool, words: int | None = None) -> str:
    """`words`: write about that many (a brief as long as a real writer's), else a short one."""
    title = re.search(r"^Title: (.*)$", user, re.M).group(1)
    if "Silent" in title:
        return ""
    sentence = "we want a method that works well"
    padding = " ".join([sentence] * (max(1, (words or 0) // 7) if words else (3 if terse else 8)))
    return f"Work like {title} is needed. {padding}. Which earlier work should we read?"


def auditor_reply(user: str) -> str:
    if "famous" in user:
        return json.dumps({"guess": "A Famous Paper", "confidence": 0.9, "rationale": "the wording"})
    return json.dumps({"guess": "", "confidence": 0.1, "rationale": "too generic"})


class ScriptedServer:
    def __init__(self, delay_s: float = 0.0, brief_words: tuple[int, int] | None = None, count_tokens: bool = False):
        """`brief_words`: (detailed, terse) lengths of the briefs; `count_tokens`: report usage in
        tokens of OpenAI's cl100k tokenizer (litellm's, offline) rather than in words."""
        self.requests: list[tuple[str, str, str]] = []  # model, system prompt, user message
        self.delay_s, self.brief_words, self.count_tokens = delay_s, brief_words, count_tokens
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model = body["model"].split("/")[-1]
                system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
                server.requests.append((model, system, user))
                time.sleep(server.delay_s)
                if model.startswith("judge"):
                    text = judge_reply(model, user)
                elif model == "writer":
                    terse = "80 to 120 words" in system
                    text = writer_reply(user, terse, server.brief_words[terse] if server.brief_words else None)
                else:
                    text = auditor_reply(user)
                reply = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                    ],
                    "usage": server.usage(system + "\n" + user, text),
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # a client killed mid-reply: expected here
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def usage(self, prompt: str, completion: str) -> dict:
        if self.count_tokens:
            import litellm

            counted = [
                litellm.token_counter(model="gpt-4o", text=prompt),
                litellm.token_counter(model="gpt-4o", text=completion),
            ]
        else:
            counted = [len(prompt.split()), len(completion.split())]
        return {"prompt_tokens": counted[0], "completion_tokens": counted[1], "total_tokens": sum(counted)}

    def close(self):
        self.httpd.shutdown()


class SilentServer:
    """Accepts connections and never answers: a judge that times out."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self):
        self.sock.close()
        for connection in self.held:
            connection.close()
