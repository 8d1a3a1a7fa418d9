"""The naive model of a t8.4 cache that never evicts: the list of what was put."""


class PrefixModel:
    def __init__(self) -> None:
        self.keys: list[list[int]] = []

    def hit(self, tokens: list[int]) -> int:
        def common(key: list[int]) -> int:
            count = 0
            while count < min(len(key), len(tokens)) and key[count] == tokens[count]:
                count += 1
            return count
        return max((common(key) for key in self.keys), default=0)

    def put(self, tokens: list[int]) -> int:
        new = len(tokens) - self.hit(tokens)
        self.keys.append(list(tokens))
        return new

    def __len__(self) -> int:
        return len({tuple(key[:end]) for key in self.keys for end in range(1, len(key) + 1)})
