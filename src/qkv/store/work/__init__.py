"""What a learner did: answers and progress per lesson, code submissions and their texts, the totals an
instructor reads, and the storage budgets and retention that keep all of it bounded."""
