from beam import batched_beam_search

if __name__ == "__main__":
    prompts = [[1, 2, 3], [10, 20, 30, 40, 50]]
    out = batched_beam_search(prompts, beam_width=3, max_new_tokens=10, alpha=0.6, eos_token_id=0)
    for prompt, beams in zip(prompts, out):
        print("prompt", prompt)
        for tokens, score in beams:
            print(f"  {score:8.3f}  {tokens}")
    assert all(len(b) == 3 for b in out)
    print("OK")
