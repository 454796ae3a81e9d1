package dev.example.orders;

import java.time.Instant;

public record Order(Long id, int quantity, String customerReference, Instant createdAt) {

    public Order withId(long newId) {
        return new Order(newId, quantity, customerReference, createdAt);
    }
}
