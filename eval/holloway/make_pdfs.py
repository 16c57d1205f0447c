#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/holloway/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["holloway/price-guide"] = (
    "Holloway Self Storage: price guide for extras and fees",
    "Holloway Self Storage - Price guide: packing materials, services and fees - April 2026",
    """
# Price guide: extras, services and fees
Holloway Self Storage Ltd. Prices from 1 April 2026 at all five stores.
All prices are in pounds sterling (GBP) and include VAT at 20%.

Weekly unit prices and goods protection prices are not in this guide.
See Unit sizes and prices and Goods protection cover in our help centre.

1. PACKING MATERIALS
Item                                   Price
Small box (40 x 30 x 30 cm)            GBP 2.40
Medium box (50 x 40 x 40 cm)           GBP 3.10
Large box (60 x 45 x 45 cm)            GBP 3.90
Wardrobe box with hanging rail         GBP 11.50
Bubble wrap, 10 m roll                 GBP 6.50
Packing tape, 66 m roll                GBP 2.20
Mattress cover (double)                GBP 5.50
Disc padlock with 2 keys               GBP 12.95
One-bedroom moving bundle*             GBP 39.00
* 15 boxes in mixed sizes, 2 rolls of tape, 1 roll of bubble wrap
  and a marker pen. Saves about GBP 9 on buying each item.

Unused boxes in perfect condition can be returned for a full refund
within 30 days, with your receipt. Tape, bubble wrap, covers and
padlocks can't be returned once opened.

2. BUSINESS SERVICES
Parcel acceptance (signed for by staff)   GBP 1.50 per parcel
Pallet delivery acceptance                GBP 8.00 per pallet
Business mailbox with mail scanning       GBP 9.50 per week
Parcels are held at the store office for up to 14 days. Deliveries
are accepted Monday to Friday during office hours only.
<<PAGE>>
3. FEES
Fee                                          Amount
Administration fee (once, at move-in)        GBP 25.00
Late payment fee (5 days after due)          GBP 15.00
Second late payment fee (28 days after due)  GBP 25.00
Overlock fee                                 GBP 30.00
Returned Direct Debit                        GBP 20.00
Lock cutting (lost key or lock left on)      GBP 45.00
Cleaning fee at move-out                     GBP 40.00
Rubbish removal                              from GBP 75.00
Alarm call-out (on site after hours)         GBP 60.00
Replacement gate access card                 GBP 10.00
Lien sale administration fee                 GBP 150.00

When fees are charged, and how to avoid them, is explained in Late
payment, fees and our right to sell stored goods, and in Moving out
and giving notice. If you think you have been charged a fee in
error, contact Billing and payments on 020 7946 0342 within 30 days.

4. VAN HIRE EXTRAS
Excess Protect (reduces excess to GBP 250)   GBP 12.00 a day
Sat nav                                      GBP 5.00 a day
Furniture blankets (pack of 12)              GBP 10.00 a hire
Sack truck                                   GBP 6.00 a hire
Extra miles above 100 a day                  22p per mile
Refuelling (if not returned full)            GBP 2.10 per litre

Van prices themselves are on the Van hire page. Van hire extras are
booked and paid for at the store when you collect the van; they can't
be added after the van has left the store. Cancelling a van hire less
than 24 hours before collection costs GBP 20. Van bookings made by
businesses with an ac-
count are invoiced monthly.
""",
)

DOCS["campnest/season-guide-2026"] = (
    "Campnest 2026 season guide",
    "Campnest - 2026 Season Guide - parks, dates and on-site services - issued January 2026",
    """
# Campnest 2026 Season Guide
Opening dates, services and on-site prices at all Campnest parks.
Prices are in Canadian dollars (CAD), before taxes.

1. PARKS AND SEASON DATES
Park                  Province   Opens          Closes         Sites  Cabins
Larchwood Lake        BC         May 1          Oct 12         142    8
Cedar Flats           BC         Apr 17         Oct 25         96     4
Kettle Bend           AB         Year-round     Year-round     118    10
Prairie Rose          SK         May 15         Sep 27         64     0
Pinecrest Harbour     ON         May 8          Oct 18         210    12
Loon Narrows          ON         May 15         Oct 12         88     6

Nightly rates for campsites and cabins are the same at every park;
see Site types and nightly rates in our help centre.

Winter camping at Kettle Bend: from November 1, 2026 to March 31,
2027, electrical sites cost CAD 38.00 a night and include a heated
washroom building. Water and sewer hookups are off in winter. Cabins
at Kettle Bend have electric heat and are open all winter at their
regular-season rate.

2. ON-SITE SERVICES AND PRICES
Service                              Price
Hot showers                          Free
Laundry, wash                        CAD 3.50 per load
Laundry, dry                         CAD 2.75 per load
Ice, 5 kg bag                        CAD 4.25
Propane refill (20 lb cylinder)      CAD 27.00
Wi-Fi at the gatehouse               Free, 1 hour a day
Wi-Fi pass, whole park               CAD 6.00 per day
<<PAGE>>
3. BOATS AND RENTALS
Rental                               Price
Canoe (with paddles and PFDs)        CAD 45.00 per day
Kayak, single                        CAD 40.00 per day
Stand-up paddleboard                 CAD 35.00 per day
Bicycle                              CAD 25.00 per day
Boat launch (trailered boats)        CAD 10.00 per day
Boat launch, season pass             CAD 60.00
Rentals are available at Larchwood Lake, Pinecrest Harbour and Loon
Narrows from the Victoria Day weekend to Labour Day. Children under
16 must be with an adult in any rental. A credit card is needed for
a damage hold of CAD 200 per boat.

4. PROGRAMS
Guided nature walks run every Saturday at 10:00 a.m. in July and
August at every park, free for registered campers. Junior Ranger
activity books are free at the gatehouse for children aged 6 to 12.

5. GOOD TO KNOW
- Cell coverage is limited at Prairie Rose and Loon Narrows.
- Quiet hours, fire rules and pet rules are the same at all parks.
- Gatehouse hours are shown on the Check-in and check-out page.
- Mosquitoes peak from mid-June to mid-July; bring insect repel-
  lent and a screen shelter.

Questions about this guide: help@campnest.example or 1-866-555-0143.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "holloway make_pdfs.py")


if __name__ == "__main__":
    main()
